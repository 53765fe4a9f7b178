// Package render is the infiniband-diags text that several commands print:
// ibnetdiscover's topology (TopoPrinter), iblinkinfo's link lines
// (LinkPrinter), the forwarding tables as ibroute and dump_fts print them
// (FTS, and the C tools' LID ranges and buffers that decide what they
// show), and the helper that formats them on every CPU in order.
package render
