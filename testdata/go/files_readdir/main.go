// Tests file I/O with the os package: MkdirTemp-like dir with random file names, WriteFile/ReadFile, os.ReadDir, Stat, Rename, RemoveAll.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	dir, err := os.MkdirTemp(".", "gorr-dir-")
	if err != nil {
		fmt.Println("mkdirtemp:", err)
		os.Exit(1)
	}
	fmt.Printf("dir=%s\n", dir)
	n := make([]byte, 1)
	rand.Read(n)
	count := 3 + int(n[0])%6
	var total uint32
	for i := 0; i < count; i++ {
		nb := make([]byte, 4)
		rand.Read(nb)
		data := make([]byte, 100+int(nb[0])*10)
		rand.Read(data)
		name := filepath.Join(dir, fmt.Sprintf("f-%s.bin", hex.EncodeToString(nb)))
		if err := os.WriteFile(name, data, 0o644); err != nil {
			fmt.Println("write:", err)
			os.Exit(1)
		}
		total += crc32.ChecksumIEEE(data)
	}
	os.Mkdir(filepath.Join(dir, "subdir"), 0o755)
	entries, _ := os.ReadDir(dir)
	fmt.Printf("ReadDir: %d entries\n", len(entries))
	var sum uint32
	for _, e := range entries {
		info, _ := e.Info()
		if e.IsDir() {
			fmt.Printf("  %s/ dir\n", e.Name())
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		sum += crc32.ChecksumIEEE(b)
		fmt.Printf("  %s %d bytes crc %08x mode %v\n", e.Name(), info.Size(), crc32.ChecksumIEEE(b), info.Mode())
	}
	fmt.Printf("crc sum written=%08x read=%08x match=%v\n", total, sum, total == sum)
	var renamed []string
	for _, e := range entries {
		if !e.IsDir() {
			newName := "renamed-" + e.Name()
			os.Rename(filepath.Join(dir, e.Name()), filepath.Join(dir, "subdir", newName))
			renamed = append(renamed, newName)
		}
	}
	sub, _ := os.ReadDir(filepath.Join(dir, "subdir"))
	names := []string{}
	for _, e := range sub {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	fmt.Printf("subdir after rename: %v\n", names)
	f, _ := os.OpenFile(filepath.Join(dir, "append.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	for i := 0; i < 3; i++ {
		fmt.Fprintf(f, "line %d pid %d\n", i, os.Getpid())
	}
	f.Sync()
	f.Close()
	st, _ := os.Stat(filepath.Join(dir, "append.log"))
	fmt.Printf("append.log size=%d modtime=%d\n", st.Size(), st.ModTime().UnixNano())
	if err := os.RemoveAll(dir); err != nil {
		fmt.Println("removeall:", err)
	}
	_, err = os.Stat(dir)
	fmt.Printf("removed: %v\n", os.IsNotExist(err))
	fmt.Println("EXIT-SUCCESS")
}
