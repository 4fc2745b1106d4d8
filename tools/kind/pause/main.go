// Command pause is the sandbox container of every pod in the offline kind node image: it holds
// the pod's namespaces, reaps the orphans it inherits as PID 1, and exits on SIGINT or SIGTERM,
// as the upstream pause image does. It is ours because no registry can be reached to pull that one.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for received := range signals {
		if received != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
