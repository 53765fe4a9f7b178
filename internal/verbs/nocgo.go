//go:build !cgo

package verbs

import "unsafe"

// Without cgo there is no way to call libibverbs: Load fails, so no object
// is ever created and the functions below it are never reached.

func cLoad(name string) error {
	return &UnavailableError{Library: name, Reason: "ibtool was built without cgo"}
}

func unreachable() { panic("verbs: libibverbs call in a build without cgo") }

func cDeviceList() ([]Device, error) { unreachable(); return nil, nil }
func cOpenDevice(string) (handle, Device, int, int, error) {
	unreachable()
	return nil, Device{}, 0, 0, nil
}
func cCloseDevice(handle) error                   { unreachable(); return nil }
func cQueryDevice(handle) (DeviceAttr, error)     { unreachable(); return DeviceAttr{}, nil }
func cQueryDeviceEx(handle) (DeviceAttrEx, error) { unreachable(); return DeviceAttrEx{}, nil }
func cQueryPort(handle, uint8) (PortAttr, error)  { unreachable(); return PortAttr{}, nil }
func cQueryGID(handle, uint8, int) (GID, error)   { unreachable(); return GID{}, nil }
func cQueryGIDEx(handle, uint32, uint32) (GIDEntry, bool, error) {
	unreachable()
	return GIDEntry{}, false, nil
}
func cQueryPKey(handle, uint8, int) (uint16, error) { unreachable(); return 0, nil }
func cAllocPD(handle) (handle, error)               { unreachable(); return nil, nil }
func cDeallocPD(handle) error                       { unreachable(); return nil }
func cRegMR(handle, unsafe.Pointer, int, Access) (handle, uint32, uint32, error) {
	unreachable()
	return nil, 0, 0, nil
}
func cDeregMR(handle) error                          { unreachable(); return nil }
func cCreateCompChannel(handle) (handle, int, error) { unreachable(); return nil, 0, nil }
func cDestroyCompChannel(handle) error               { unreachable(); return nil }
func cCreateCQ(handle, int, handle, int) (handle, int, error) {
	unreachable()
	return nil, 0, nil
}
func cDestroyCQ(handle) error                               { unreachable(); return nil }
func cGetCQEvent(handle) (handle, error)                    { unreachable(); return nil, nil }
func cReqNotifyCQ(handle, bool) error                       { unreachable(); return nil }
func cNewPollScratch() handle                               { unreachable(); return nil }
func cFreeScratch(handle)                                   { unreachable() }
func cPollCQ(handle, handle, []WorkCompletion) (int, error) { unreachable(); return 0, nil }
func cCreateQP(handle, *QPInitAttr, handle, handle) (handle, uint32, QPCap, error) {
	unreachable()
	return nil, 0, QPCap{}, nil
}
func cDestroyQP(handle) error                               { unreachable(); return nil }
func cModifyQP(handle, *QPAttr, QPAttrMask) error           { unreachable(); return nil }
func cQueryQP(handle, QPAttrMask) (QPAttr, error)           { unreachable(); return QPAttr{}, nil }
func cNewPostScratch(int) handle                            { unreachable(); return nil }
func cPostSend(handle, handle, []SendWR) error              { unreachable(); return nil }
func cPostRecv(handle, handle, []RecvWR) error              { unreachable(); return nil }
func cGetAsyncEvent(handle) (EventType, handle, int, error) { unreachable(); return 0, nil, 0, nil }
