package tracee

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseMaps(t *testing.T) {
	const text = `55d0c0a00000-55d0c0a02000 r--p 00000000 fe:01 1311 /usr/bin/true
7f1c2a000000-7f1c2a028000 r-xp 00028000 fe:01 2048   /usr/lib/x86_64-linux-gnu/libc.so.6
7f1c2b000000-7f1c2b001000 rw-s 00000000 00:01 77     /dev/shm/a name  with spaces
7f1c2c000000-7f1c2c021000 rw-p 00000000 00:00 0 
7ffd1000000-7ffd1021000 rw-p 00000000 00:00 0                          [stack]
7f1c2d000000-7f1c2d001000 --xp 00000000 00:05 9     /memfd:jit (deleted)
short line
`
	got, err := parseMaps(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := []Map{
		{Start: 0x55d0c0a00000, End: 0x55d0c0a02000, Prot: unix.PROT_READ, Dev: "fe:01", Inode: 1311, Name: "/usr/bin/true"},
		{Start: 0x7f1c2a000000, End: 0x7f1c2a028000, Prot: unix.PROT_READ | unix.PROT_EXEC, Offset: 0x28000, Dev: "fe:01", Inode: 2048, Name: "/usr/lib/x86_64-linux-gnu/libc.so.6"},
		{Start: 0x7f1c2b000000, End: 0x7f1c2b001000, Prot: unix.PROT_READ | unix.PROT_WRITE, Shared: true, Dev: "00:01", Inode: 77, Name: "/dev/shm/a name  with spaces"},
		{Start: 0x7f1c2c000000, End: 0x7f1c2c021000, Prot: unix.PROT_READ | unix.PROT_WRITE, Dev: "00:00"},
		{Start: 0x7ffd1000000, End: 0x7ffd1021000, Prot: unix.PROT_READ | unix.PROT_WRITE, Dev: "00:00", Name: "[stack]"},
		{Start: 0x7f1c2d000000, End: 0x7f1c2d001000, Prot: unix.PROT_EXEC, Dev: "00:05", Inode: 9, Name: "/memfd:jit (deleted)"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
	if _, err := parseMaps(strings.NewReader("zz-1 r--p 0 00:00 0\n")); err == nil {
		t.Fatal("a bad range parsed")
	}
}

func BenchmarkMapsSelf(b *testing.B) {
	for b.Loop() {
		if _, err := Maps(os.Getpid()); err != nil {
			b.Fatal(err)
		}
	}
}
