package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
)

// lineReader reads lines into one buffer and gives each without copying:
// a line is valid until the next call. The buffer grows to the longest
// line.
type lineReader struct {
	r          io.Reader
	buf        []byte
	start, end int // the bytes read and not yet given
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: r, buf: make([]byte, floorPipeSize+64<<10)}
}

func (l *lineReader) next() ([]byte, error) {
	scanned := 0 // of buf[start:end], the bytes known to hold no newline
	for {
		if i := bytes.IndexByte(l.buf[l.start+scanned:l.end], '\n'); i >= 0 {
			line := l.buf[l.start : l.start+scanned+i+1]
			l.start += scanned + i + 1
			return line, nil
		}
		scanned = l.end - l.start
		switch {
		case l.start == l.end:
			l.start, l.end = 0, 0
		case l.end == len(l.buf) && l.start > len(l.buf)/2:
			copy(l.buf, l.buf[l.start:l.end])
			l.start, l.end = 0, l.end-l.start
		case l.end == len(l.buf):
			grown := make([]byte, 2*len(l.buf))
			copy(grown, l.buf[l.start:l.end])
			l.buf, l.start, l.end = grown, 0, l.end-l.start
		}
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		if n == 0 && err != nil {
			return nil, err
		}
	}
}

// floorPipeSize is how large the floors make their pipes, where the OS
// lets them (Linux: F_SETPIPE_SZ, up to /proc/sys/fs/pipe-max-size).
const floorPipeSize = 1 << 20

// startFloorServer starts the bench server process with pipes of
// floorPipeSize to and from it.
func startFloorServer(exe string) (cmd *exec.Cmd, in *os.File, out *os.File, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, nil, err
	}
	setPipeSize(inW, floorPipeSize)
	setPipeSize(outR, floorPipeSize)
	cmd = exec.Command(exe, "serve")
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, nil, err
	}
	return cmd, inW, outR, nil
}
