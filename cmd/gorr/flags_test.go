package main

import (
	"reflect"
	"testing"
)

func TestParseFlags(t *testing.T) {
	p, err := parseFlags([]string{"-o", "dir", "--env=A=1", "-vB=2", "-n", "--print-trace-dir", "3", "prog", "-o", "x"}, recordFlags)
	if err != nil {
		t.Fatal(err)
	}
	if p.get("output-trace-dir") != "dir" || p.get("print-trace-dir") != "3" || !p.has("no-syscall-buffer") {
		t.Fatalf("parsed %+v", p)
	}
	if !reflect.DeepEqual(p.vals["env"], []string{"A=1", "B=2"}) {
		t.Fatalf("env %v", p.vals["env"])
	}
	if !reflect.DeepEqual(p.rest, []string{"prog", "-o", "x"}) {
		t.Fatalf("rest %v", p.rest)
	}
	for _, bad := range [][]string{{"--nope"}, {"-o"}, {"-n=1"}} {
		if _, err := parseFlags(bad, recordFlags); err == nil {
			t.Errorf("%v: want an error", bad)
		}
	}
}

func TestSetEnv(t *testing.T) {
	got := setEnv([]string{"A=1", "B=2", "AB=3"}, "A=9")
	if !reflect.DeepEqual(got, []string{"B=2", "AB=3", "A=9"}) {
		t.Fatalf("%v", got)
	}
}
