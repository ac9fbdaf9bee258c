package main

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// printFlags prints fs's flags as flag.PrintDefaults does, but with two
// dashes, as the README and the error messages write them (the flag
// package takes either), and less the hidden ones.
func printFlags(fs *flag.FlagSet, w io.Writer) {
	fs.VisitAll(func(f *flag.Flag) {
		if hidden[f.Name] {
			return
		}
		arg, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
		switch f.DefValue {
		case "", "0", "0s", "false", "[]":
		default:
			if v := reflect.ValueOf(f.Value); v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.String {
				fmt.Fprintf(w, " (default %q)", f.DefValue)
			} else {
				fmt.Fprintf(w, " (default %s)", f.DefValue)
			}
		}
		fmt.Fprintln(w)
	})
}
