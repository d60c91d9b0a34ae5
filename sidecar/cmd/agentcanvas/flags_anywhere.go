package main

import "flag"

// parseAnywhere parses fs from args with flags allowed after the positional arguments too
// (`run flows/x.yaml --dry-run`), as people type them; Go's flag package alone stops at the
// first argument that is not a flag. After "--" everything is positional.
func parseAnywhere(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			positional = append(positional, rest...) // the flag package consumed "--"
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	// Leave the positional arguments as fs.Args(), without reading them as flags again.
	return fs.Parse(append([]string{"--"}, positional...))
}
