// Package ibnetdiscover is the ibnetdiscover command: the fabric's topology,
// node lists, port report, cache and diff.
package ibnetdiscover
