package mad

// NoticeDetails decodes the DataDetails of a generic notice (trap) into the
// structure its TrapNumber uses (IBA 14.2.5.1): NoticeTrap64 for traps
// 64..67, NoticeTrap128, NoticeTrap129 for 129..131, NoticeTrap144,
// NoticeTrap145, NoticeTrap256, NoticeTrap257 for 257 and 258, and
// NoticeTrap259. It returns nil for vendor notices and other traps.
func NoticeDetails(n *Notice) Struct {
	if n.IsGeneric == 0 {
		return nil
	}
	var s Struct
	switch n.TrapNumber {
	case 64, 65, 66, 67:
		s = new(NoticeTrap64)
	case 128:
		s = new(NoticeTrap128)
	case 129, 130, 131:
		s = new(NoticeTrap129)
	case 144:
		s = new(NoticeTrap144)
	case 145:
		s = new(NoticeTrap145)
	case 256:
		s = new(NoticeTrap256)
	case 257, 258:
		s = new(NoticeTrap257)
	case 259:
		s = new(NoticeTrap259)
	default:
		return nil
	}
	if err := s.Unmarshal(n.DataDetails[:]); err != nil {
		panic(err) // cannot happen: DataDetails is the size of every detail structure
	}
	return s
}
