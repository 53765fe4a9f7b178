// Package render is the infiniband-diags text that several commands print:
// ibnetdiscover's topology (TopoPrinter), iblinkinfo's link lines
// (LinkPrinter), and the helper that formats them on every CPU in order.
package render
