package cmdutil

import (
	"context"
	"fmt"
	"os"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/vendormad"
)

// VendorServe answers requests of a vendor class with the given OUI until
// ctx ends or SIGINT/SIGTERM: reply builds the answer to one request.
// Requests with another OUI get none (the kernel would not deliver them).
func VendorServe(ctx context.Context, eng *rpc.Engine, tool string, class uint8, oui uint32, reply func(req mad.Header) mad.Header) error {
	methods := make([]uint8, 0, 127)
	for m := uint8(1); m < mad.MethodResponse; m++ {
		methods = append(methods, m)
	}
	err := eng.Serve(class, 1, oui, methods, func(pkt *umad.Packet) mad.Header {
		req := mad.Header(pkt.MAD)
		if len(req) < mad.Size || vendormad.OUI(req) != oui {
			return nil
		}
		return reply(req[:mad.Size])
	})
	if err != nil {
		return &Failure{CMsg: fmt.Sprintf("can't serve class %d on this port", class), Err: err, Stderr: true}
	}
	sigs := make(chan os.Signal, 1)
	defer umad.HandleSignals(sigs)() // ends with our statistics, not exit 130
	select {
	case <-ctx.Done():
	case <-sigs:
	}
	return nil
}
