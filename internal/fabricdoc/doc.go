// Package fabricdoc is the discovery model in the JSON vocabulary
// (docs/json.md): nodes, ports, link ends and walk errors as ibnetdiscover,
// iblinkinfo, the node lists and subnet_diff print them.
package fabricdoc
