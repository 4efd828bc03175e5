package debugserver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/gorr-debugger/gorr/internal/gdbrsp"
)

// Host I/O (vFile): gdb opens files through the target for its sysroot
// ("target:", its default) and for /proc files of the debugged process.
// Files the recording captured are served from the trace, by the path the
// program saw (so symbols are found when the binary was rebuilt or
// deleted); /proc/PID/maps is the recorded one; other /proc files of the
// recorded process do not exist; other files are read from this machine
// (separate debug info, say). Nothing is ever written.

// gdb's File-I/O errno values.
const (
	fioEPERM  = 1
	fioENOENT = 2
	fioEBADF  = 9
	fioEACCES = 13
	fioEINVAL = 22
	fioEMFILE = 24
	fioEROFS  = 30
)

// hostFile is an open vFile descriptor: a file, or bytes made up here.
type hostFile struct {
	f    *os.File
	data []byte
}

const maxHostFiles = 64

// procMapsPath is compiled at its first use (not at every gorr start).
var procMapsPath = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^/proc/(\d+)(?:/task/(\d+))?/maps$`)
})

func fioError(errno int) []byte { return []byte(fmt.Sprintf("F-1,%x", errno)) }

func fioErrno(err error) int {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fioENOENT
	case errors.Is(err, fs.ErrPermission):
		return fioEACCES
	}
	return fioEINVAL
}

// hostIO answers a vFile request.
func (s *Server) hostIO(p gdbrsp.VFile) []byte {
	args := strings.Split(string(p.Args), ",")
	num := func(i int) (int64, bool) {
		if i >= len(args) {
			return 0, false
		}
		v, err := strconv.ParseInt(args[i], 16, 64)
		return v, err == nil && v >= 0
	}
	file := func() (*hostFile, bool) {
		fd, ok := num(0)
		if !ok {
			return nil, false
		}
		h, ok := s.files[int(fd)]
		return h, ok
	}
	switch p.Op {
	case "setfs":
		return []byte("F0") // one file system: the recording's
	case "open":
		if len(args) < 2 {
			return fioError(fioEINVAL)
		}
		name, err := gdbrsp.DecodeHex([]byte(args[0]))
		if err != nil {
			return fioError(fioEINVAL)
		}
		if flags, ok := num(1); !ok || flags&3 != 0 {
			return fioError(fioEROFS) // the recording is read-only
		}
		h, errno := s.openHost(string(name))
		if h == nil {
			return fioError(errno)
		}
		if len(s.files) >= maxHostFiles {
			if h.f != nil {
				h.f.Close()
			}
			return fioError(fioEMFILE)
		}
		if s.files == nil {
			s.files = map[int]*hostFile{}
		}
		fd := 1
		for s.files[fd] != nil {
			fd++
		}
		s.files[fd] = h
		return []byte(fmt.Sprintf("F%x", fd))
	case "close":
		h, ok := file()
		if !ok {
			return fioError(fioEBADF)
		}
		if h.f != nil {
			h.f.Close()
		}
		fd, _ := num(0)
		delete(s.files, int(fd))
		return []byte("F0")
	case "pread":
		h, ok := file()
		count, ok1 := num(1)
		off, ok2 := num(2)
		if !ok {
			return fioError(fioEBADF)
		}
		if !ok1 || !ok2 {
			return fioError(fioEINVAL)
		}
		count = min(count, 32<<10)
		var b []byte
		if h.f != nil {
			b = make([]byte, count)
			n, err := h.f.ReadAt(b, off)
			if n == 0 && err != nil && !errors.Is(err, io.EOF) {
				return fioError(fioErrno(err))
			}
			b = b[:n]
		} else if off < int64(len(h.data)) {
			b = h.data[off:min(int64(len(h.data)), off+count)]
		}
		return append([]byte(fmt.Sprintf("F%x;", len(b))), b...)
	case "fstat":
		h, ok := file()
		if !ok {
			return fioError(fioEBADF)
		}
		size := int64(len(h.data))
		mode := uint32(0o100444)
		mtime := uint32(0)
		if h.f != nil {
			fi, err := h.f.Stat()
			if err != nil {
				return fioError(fioErrno(err))
			}
			size, mtime = fi.Size(), uint32(fi.ModTime().Unix())
		}
		// gdb's struct stat: 32-bit fields but for size, blksize and
		// blocks, big-endian.
		st := make([]byte, 0, 64)
		be32 := func(v uint32) { st = binary.BigEndian.AppendUint32(st, v) }
		be64 := func(v uint64) { st = binary.BigEndian.AppendUint64(st, v) }
		be32(0)    // dev
		be32(0)    // ino
		be32(mode) // mode
		be32(1)    // nlink
		be32(0)    // uid
		be32(0)    // gid
		be32(0)    // rdev
		be64(uint64(size))
		be64(4096)
		be64(uint64(size+511) / 512)
		be32(mtime) // atime
		be32(mtime) // mtime
		be32(mtime) // ctime
		return append([]byte(fmt.Sprintf("F%x;", len(st))), st...)
	case "pwrite", "unlink":
		return fioError(fioEPERM)
	}
	return nil2()
}

// openHost opens name as the recorded program would have seen it.
func (s *Server) openHost(name string) (*hostFile, int) {
	if m := procMapsPath().FindStringSubmatch(name); m != nil && m[1] == strconv.Itoa(int(s.stop.Pid)) {
		if m[2] != "" && !s.knownThread(gdbrsp.ThreadID{Tid: mustAtoi(m[2])}) {
			return nil, fioENOENT
		}
		b, err := s.sess.ProcMaps()
		if err != nil {
			return nil, fioENOENT
		}
		return &hostFile{data: b}, 0
	}
	if strings.HasPrefix(name, "/proc/") {
		// Not this machine's processes, and nothing else of the
		// recorded one was recorded.
		return nil, fioENOENT
	}
	path := name
	if c, ok := s.sess.CapturedFile(name); ok {
		path = c
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fioErrno(err)
	}
	if fi, err := f.Stat(); err != nil || fi.IsDir() {
		f.Close()
		return nil, fioEACCES
	}
	return &hostFile{f: f}, 0
}

func mustAtoi(s string) int64 {
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}

// closeHostFiles closes every vFile descriptor.
func (s *Server) closeHostFiles() {
	for fd, h := range s.files {
		if h.f != nil {
			h.f.Close()
		}
		delete(s.files, fd)
	}
}
