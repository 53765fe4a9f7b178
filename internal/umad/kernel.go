package umad

// Placeholder until the kernel transport lands (being written now).

import "errors"

const (
	DefaultSysfsRoot = "/sys"
	DefaultDevDir    = "/dev/infiniband"
)

func HasKernelDevices(sysRoot string) bool { return false }

type kernelOpener struct{}

func NewKernel(sysRoot, devDir string) Opener { return kernelOpener{} }

func (kernelOpener) Name() string       { return "kernel" }
func (kernelOpener) CAs() ([]CA, error) { return nil, errors.New("kernel transport not built yet") }
func (kernelOpener) Open(string, int) (Port, error) {
	return nil, errors.New("kernel transport not built yet")
}
