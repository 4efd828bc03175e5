package main

import (
	"fmt"
	"strings"
)

// flagSpec describes one option: its short and long names and whether it
// takes a value.
type flagSpec struct {
	short, long string
	value       bool
}

type parsed struct {
	vals map[string][]string // by long name
	rest []string
}

func (p parsed) has(long string) bool { _, ok := p.vals[long]; return ok }
func (p parsed) get(long string) string {
	v := p.vals[long]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// parseFlags parses rr-style options (-x V, -xV, --long V, --long=V) up
// to the first non-option argument or "--".
func parseFlags(args []string, specs []flagSpec) (parsed, error) {
	p := parsed{vals: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			p.rest = args[i+1:]
			return p, nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			p.rest = args[i:]
			return p, nil
		}
		var spec *flagSpec
		var val string
		hasVal := false
		if strings.HasPrefix(a, "--") {
			name := a[2:]
			if k := strings.IndexByte(name, '='); k >= 0 {
				name, val, hasVal = name[:k], name[k+1:], true
			}
			for j := range specs {
				if specs[j].long == name {
					spec = &specs[j]
				}
			}
		} else {
			name := a[1:2]
			if len(a) > 2 {
				val, hasVal = a[2:], true
			}
			for j := range specs {
				if specs[j].short == name {
					spec = &specs[j]
				}
			}
		}
		if spec == nil {
			return p, fmt.Errorf("unknown option %s", a)
		}
		if spec.value && !hasVal {
			if i+1 >= len(args) {
				return p, fmt.Errorf("option %s needs a value", a)
			}
			i++
			val = args[i]
		} else if !spec.value && hasVal {
			return p, fmt.Errorf("option %s takes no value", a)
		}
		p.vals[spec.long] = append(p.vals[spec.long], val)
	}
	return p, nil
}
