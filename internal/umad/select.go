package umad

import (
	"fmt"
	"os"
)

// TransportEnv forces a transport: "kernel" or "ibsim".
const TransportEnv = "IBTOOL_TRANSPORT"

// DefaultOpener picks the transport the way an operator expects:
// IBTOOL_TRANSPORT if set; the simulator if one of ibsim's own client
// variables is set; kernel umad devices if the host has any; otherwise a
// running ibsim on the default socket.
func DefaultOpener() Opener { return &autoOpener{} }

type autoOpener struct {
	chosen Opener
	err    error
}

func (a *autoOpener) pick() (Opener, error) {
	if a.chosen == nil && a.err == nil {
		a.chosen, a.err = choose(os.Getenv, DefaultSysfsRoot)
	}
	return a.chosen, a.err
}

func (a *autoOpener) Name() string {
	if o, err := a.pick(); err == nil {
		return o.Name()
	}
	return "none"
}

func (a *autoOpener) CAs() ([]CA, error) {
	o, err := a.pick()
	if err != nil {
		return nil, err
	}
	return o.CAs()
}

func (a *autoOpener) Open(ca string, port int) (Port, error) {
	o, err := a.pick()
	if err != nil {
		return nil, err
	}
	return o.Open(ca, port)
}

func choose(getenv func(string) string, sysRoot string) (Opener, error) {
	switch t := getenv(TransportEnv); t {
	case "kernel":
		return NewKernel(sysRoot, DefaultDevDir), nil
	case "ibsim":
		return NewSim(SimConfigFromEnv(getenv)), nil
	case "":
	default:
		return nil, fmt.Errorf("%s=%q: use \"kernel\" or \"ibsim\"", TransportEnv, t)
	}
	if getenv("IBSIM_SOCKNAME") != "" || getenv("IBSIM_SERVER_NAME") != "" || getenv("SIM_HOST") != "" {
		return NewSim(SimConfigFromEnv(getenv)), nil
	}
	if HasKernelDevices(sysRoot) {
		return NewKernel(sysRoot, DefaultDevDir), nil
	}
	cfg := SimConfigFromEnv(getenv)
	if SimReachable(cfg) {
		return NewSim(cfg), nil
	}
	return nil, fmt.Errorf("no InfiniBand port: no umad devices under %s/class/infiniband_mad (is ib_umad loaded?) and no ibsim simulator at %s (start ibsim or set IBSIM_SOCKNAME)", sysRoot, cfg.describe())
}
