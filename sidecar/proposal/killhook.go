package proposal

import (
	"os"
	"strconv"
)

// testKillEnv is the fault-injection tests' kill switch: set to k, the process kills itself
// (SIGKILL, no clean-up of any kind) at step k of its apply (txn.step). Only tests set it.
const testKillEnv = "AGENTCANVAS_TEST_KILL_AT_STEP"

// testNoSpaceCheckEnv, set by the disk-full test, skips the free-space check, so that the
// apply runs into the full disk and must roll back.
const testNoSpaceCheckEnv = "AGENTCANVAS_TEST_NO_SPACE_CHECK"

func testKillStep() int {
	v := os.Getenv(testKillEnv)
	if v == "" {
		return 0
	}
	k, _ := strconv.Atoi(v)
	return k
}

// testKillAtEnv names a point (testKillAt) at which the process kills itself; only tests set it.
const testKillAtEnv = "AGENTCANVAS_TEST_KILL_AT"

// testKillAt kills the process when the tests asked for it at this point.
func testKillAt(point string) {
	if os.Getenv(testKillAtEnv) == point {
		killSelf()
	}
}

func killSelf() {
	p, _ := os.FindProcess(os.Getpid())
	p.Kill()
	select {} // the signal is on its way: take no further step
}
