//go:build linux

package stdio

import (
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// exits waits for the exit of every child started here with one
// goroutine, whichever their number: the children's pidfds are in one
// epoll set, and a child costs no goroutine of its own until it exits.
// The goroutine runs while a child is watched.
//
// The pidfd is the one os/exec asks the kernel for at the start
// (SysProcAttr.PidFD), which os.Process keeps a duplicate of: once it is
// in the set, our copy is closed, and the child costs no descriptor more
// than os/exec's own. Each is registered for one event (EPOLLONESHOT) under
// a number of its own, since its descriptor number is no longer ours.
var exits = struct {
	mu      sync.Mutex
	epfd    int // 0 until made
	next    int32
	waiting map[int32]func()
	running bool
}{}

// askPidfd asks os/exec for the child's pidfd, unless the caller did;
// it returns where it will be, or nil.
func askPidfd(cmd *exec.Cmd) *int {
	var attr syscall.SysProcAttr
	if cmd.SysProcAttr != nil {
		if cmd.SysProcAttr.PidFD != nil {
			return nil // the caller's own
		}
		attr = *cmd.SysProcAttr // a copy: the caller's may be shared
	}
	fd := -1
	attr.PidFD = &fd
	cmd.SysProcAttr = &attr
	return &fd
}

// closePidfd closes the pidfd of a child that did not start, if any.
func closePidfd(pidfd *int) {
	if pidfd != nil && *pidfd >= 0 {
		unix.Close(*pidfd)
	}
}

// watchExit calls exited, in a goroutine of its own, once the process of
// pidfd (from askPidfd, after the start; it is closed here) has exited (it
// is not reaped: cmd.Wait then returns at once). It reports false when the
// process cannot be watched so (no pidfd: an old kernel): then a
// goroutine must wait for it.
func watchExit(pidfd *int, exited func()) bool {
	if pidfd == nil || *pidfd < 0 {
		return false
	}
	fd := *pidfd
	defer unix.Close(fd)
	exits.mu.Lock()
	defer exits.mu.Unlock()
	if exits.epfd == 0 {
		epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return false
		}
		exits.epfd = epfd
		exits.waiting = map[int32]func(){}
	}
	exits.next++
	key := exits.next
	if err := unix.EpollCtl(exits.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLONESHOT, Fd: key}); err != nil {
		return false
	}
	exits.waiting[key] = exited
	if !exits.running {
		exits.running = true
		go watchExits(exits.epfd)
	}
	return true
}

// watchExits hands each exit to its callback, and returns once no child
// is watched. The pidfd leaves the set by itself when os.Process closes
// its copy, once the child is reaped.
func watchExits(epfd int) {
	events := make([]unix.EpollEvent, 16)
	for {
		n, _ := unix.EpollWait(epfd, events, -1) // EINTR: look again
		exits.mu.Lock()
		for _, ev := range events[:max(n, 0)] {
			if exited, ok := exits.waiting[ev.Fd]; ok {
				delete(exits.waiting, ev.Fd)
				go exited()
			}
		}
		if len(exits.waiting) == 0 {
			exits.running = false
			exits.mu.Unlock()
			return
		}
		exits.mu.Unlock()
	}
}

// exitedNow asks the kernel whether the child pid has exited, reaped or
// not, without reaping it; known is false when it cannot tell.
func exitedNow(pid int) (exited, known bool) {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	switch {
	case err == unix.ECHILD:
		return true, true // reaped already
	case err != nil:
		return false, false
	}
	return info.Signo == int32(unix.SIGCHLD), true // zero when it still runs
}
