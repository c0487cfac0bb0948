//go:build linux

package host

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// backstop is a POSIX timer that sends the process SIGKILL: the last resort
// against a built-in stuck in a pure guest loop when the Go watchdog cannot
// run (trusted.go). wazero's compiled code cannot be preempted, so with
// GOMAXPROCS=1, or once the garbage collector waits to stop the world, no
// goroutine runs again; the kernel's timer still fires. SIGKILL, because any
// signal the Go runtime handles needs it: SIGABRT's traceback of the
// goroutine inside compiled wasm code faults.
type backstop struct{ id int32 }

// sigevent is struct sigevent of Linux (64 bytes).
type sigevent struct {
	value  uint64
	signo  int32
	notify int32
	_      [12]int32
}

const sigevSignal = 0

// newBackstop creates a disarmed timer; nil when the system has none.
func newBackstop() *backstop {
	ev := sigevent{signo: int32(unix.SIGKILL), notify: sigevSignal}
	var id int32
	_, _, errno := unix.Syscall(unix.SYS_TIMER_CREATE, uintptr(unix.CLOCK_MONOTONIC), uintptr(unsafe.Pointer(&ev)), uintptr(unsafe.Pointer(&id)))
	if errno != 0 {
		return nil
	}
	return &backstop{id: id}
}

// arm makes the timer fire after d (0 disarms it).
func (b *backstop) arm(d time.Duration) {
	if b == nil {
		return
	}
	if d < 0 {
		d = time.Nanosecond
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	_, _, _ = unix.Syscall6(unix.SYS_TIMER_SETTIME, uintptr(b.id), 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
}

// close deletes the timer.
func (b *backstop) close() {
	if b == nil {
		return
	}
	_, _, _ = unix.Syscall(unix.SYS_TIMER_DELETE, uintptr(b.id), 0, 0)
}
