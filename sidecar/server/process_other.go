//go:build !unix

package server

import "os"

func processAlive(pid int) bool {
	_, err := os.FindProcess(pid)
	return err == nil
}
