// Command ibtool-man writes ibtool's man pages (section 8), generated from
// its command tree, into a directory: "make man" runs it into docs/man.
//
//	go run ./cmd/ibtool-man [-date YYYY-MM-DD] DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/ibtool/ibtool/internal/cli"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
)

func main() {
	date := flag.String("date", defaultDate(), "date in the pages' header")
	version := flag.String("version", cmdutil.Version, "ibtool version in the pages' footer")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: ibtool-man [-date YYYY-MM-DD] [-version V] DIR")
		os.Exit(2)
	}
	cmdutil.Version = *version
	dir := flag.Arg(0)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "ibtool-man:", err)
		os.Exit(1)
	}
	files, err := cli.WriteManPages(dir, *date)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ibtool-man:", err)
		os.Exit(1)
	}
	fmt.Printf("%d man pages in %s\n", len(files), dir)
}

// defaultDate is SOURCE_DATE_EPOCH's day when set (reproducible builds),
// else today.
func defaultDate() string {
	t := time.Now()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
			t = time.Unix(sec, 0)
		}
	}
	return t.UTC().Format("2006-01-02")
}
