//go:build linux

package stdio

import (
	"sync"

	"golang.org/x/sys/unix"
)

// exits waits for the exit of every child started here with one
// goroutine, whichever their number: the children's pidfds are in one
// epoll set, and a child costs no goroutine of its own until it exits.
// The goroutine runs while a child is watched.
var exits = struct {
	mu      sync.Mutex
	epfd    int // 0 until made
	waiting map[int32]func()
	running bool
}{}

// watchExit calls exited, in a goroutine of its own, once process pid has
// exited (it is not reaped: cmd.Wait then returns at once). It reports
// false, having done nothing, when the process cannot be watched so (a
// kernel without pidfds): then a goroutine must wait for it.
func watchExit(pid int, exited func()) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	exits.mu.Lock()
	defer exits.mu.Unlock()
	if exits.epfd == 0 {
		epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			unix.Close(fd)
			return false
		}
		exits.epfd = epfd
		exits.waiting = map[int32]func(){}
	}
	if err := unix.EpollCtl(exits.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
		unix.Close(fd)
		return false
	}
	exits.waiting[int32(fd)] = exited
	if !exits.running {
		exits.running = true
		go watchExits(exits.epfd)
	}
	return true
}

// watchExits hands each exit to its callback, and returns once no child
// is watched.
func watchExits(epfd int) {
	events := make([]unix.EpollEvent, 16)
	for {
		n, err := unix.EpollWait(epfd, events, -1)
		exits.mu.Lock()
		if err != nil && err != unix.EINTR {
			// Not expected of a valid epoll set: let every child be waited
			// for by a goroutine of its own instead.
			for fd, exited := range exits.waiting {
				delete(exits.waiting, fd)
				unix.EpollCtl(epfd, unix.EPOLL_CTL_DEL, int(fd), nil)
				go waitPidfd(int(fd), exited)
			}
		}
		for _, ev := range events[:max(n, 0)] {
			exited, ok := exits.waiting[ev.Fd]
			if !ok {
				continue
			}
			delete(exits.waiting, ev.Fd)
			unix.EpollCtl(epfd, unix.EPOLL_CTL_DEL, int(ev.Fd), nil)
			unix.Close(int(ev.Fd))
			go exited()
		}
		if len(exits.waiting) == 0 {
			exits.running = false
			exits.mu.Unlock()
			return
		}
		exits.mu.Unlock()
	}
}

// waitPidfd waits for the exit of the process of pidfd fd, without
// reaping it, then calls exited.
func waitPidfd(fd int, exited func()) {
	var info unix.Siginfo
	for unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
	}
	unix.Close(fd)
	exited()
}
