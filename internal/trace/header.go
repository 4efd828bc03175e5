package trace

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Format versions.
const (
	// FormatVersion is the version of the format this package writes. It
	// is bumped for every change of the format, compatible or not.
	// 3: paired system-call frames (evPair).
	// 4: registers as changes from the previous frame's (evRegsDelta).
	// 5: rdtsc and cpuid trapped per process (ExecUntrapped, TrapsAfter;
	// a reader that ignores them traps everywhere, which replays the
	// same).
	// 6: runs of buffered calls stored as call records (evRun).
	FormatVersion = 6
	// ReaderVersion is the highest RequiredReaderVersion this package can
	// read. A writer sets RequiredReaderVersion to the oldest reader
	// version that reads its traces correctly; it is bumped only for
	// breaking changes (changes that old readers cannot skip over).
	// 2: readers of paired frames (a reader of version 1 would skip
	// the field and lose the entry events).
	// 3: readers of register changes (evRegsDelta: a reader of version
	// 2 would skip the field and lose the registers).
	// 4: readers of runs (evRun: a reader of version 3 would skip the
	// field and lose the calls).
	ReaderVersion = 4
	// requiredReader is the RequiredReaderVersion of the traces this
	// package writes.
	requiredReader = 4
)

// Names of the entries of a trace directory.
const (
	HeaderFile = "header.json"
	EventsFile = "events"
	DataFile   = "data"
	FilesDir   = "files"

	headerTemp     = "header.json.tmp"
	maxHeaderBytes = 64 << 20
)

// Errors returned by Open and Next. Use errors.Is to test for them.
var (
	// ErrIncomplete is returned (wrapped) by Next after the last readable
	// event of a trace whose recording did not end with Writer.Close.
	ErrIncomplete = errors.New("trace is incomplete")
	// ErrNotTrace is returned (wrapped) by Open for a directory that is
	// not a gorr trace.
	ErrNotTrace = errors.New("not a gorr trace")
	// ErrUnsupportedVersion is returned (wrapped) by Open for a trace that
	// needs a newer reader.
	ErrUnsupportedVersion = errors.New("unsupported trace format version")
	// ErrCorrupt is matched (errors.Is) by every *CorruptError.
	ErrCorrupt = errors.New("trace is corrupt")
	// ErrTampered is returned (wrapped) when a captured file or the
	// header does not match the hash written at record time.
	ErrTampered = errors.New("trace was modified after recording")
)

// Uname is the uname(2) of the recording machine.
type Uname struct {
	Sysname  string
	Release  string
	Version  string
	Machine  string
	Nodename string
}

// Header is the content of header.json.
type Header struct {
	// Version is the format version of the writer (FormatVersion).
	Version int
	// RequiredReaderVersion is the lowest ReaderVersion able to read the
	// trace; Open refuses traces that need a newer reader.
	RequiredReaderVersion int
	GorrVersion           string
	// UUID identifies the trace (random, RFC 4122 version 4).
	UUID    string
	Created time.Time
	Argv    []string
	Env     []string
	Cwd     string
	// Exe is the path of the first program.
	Exe      string
	Uname    Uname
	CPUModel string
	// BindCPU is the CPU the tracees were bound to, -1 when unbound.
	BindCPU       int
	CPUIDFaulting bool
	Chaos         bool
	XSaveSize     int
	// PointStrategy names how asynchronous points (KindSched) were taken
	// and how replay finds them (asyncpoint.Strategy*); empty in traces
	// written before the field existed (the state identity with the
	// word hash).
	PointStrategy string `json:",omitempty"`
	// SyscallBuffer tells that the in-process system-call buffer was on
	// (record --syscall-buffer): buffered calls appear as ordinary
	// SYSCALL_ENTRY/SYSCALL_EXIT pairs made from its stub.
	SyscallBuffer bool `json:",omitempty"`
	// SyscallBufferLayout is the buffer's layout version
	// (syscallbuf.Layout) when SyscallBuffer is set; 0 in traces
	// written before the field existed.
	SyscallBufferLayout int `json:",omitempty"`

	// SharedFiles lists the captured files (names under files/) that a
	// MAP_SHARED mapping used, or whose size the recording changed while
	// one did, at some point of the recording. Replay maps its own
	// copies of these, which follow the recorded writes and size
	// changes, and the captured files themselves for the others.
	// SharedFilesListed says the list was written (at Close): without it
	// replay copies every file it maps.
	SharedFiles       []string `json:",omitempty"`
	SharedFilesListed bool     `json:",omitempty"`
	// Complete is true once the recorder called Writer.Close.
	Complete bool
	// EventCount is the number of events (valid when Complete).
	EventCount uint64
	// ExitStatus is the wait status of the initial process.
	ExitStatus int
	// Extra holds fields for forward compatibility; readers ignore keys
	// they do not know.
	Extra map[string]json.RawMessage `json:",omitempty"`

	// Integrity (format version 2). Files is the manifest of the captured
	// files (name relative to the trace, such as "files/1-h", to its size
	// and SHA-256), kept up to date while recording. HeaderSHA256 is the
	// SHA-256 of the header's canonical bytes (see canonicalHeader),
	// written with every header; readers check it in Open.
	Files        map[string]FileDigest `json:",omitempty"`
	HeaderSHA256 string                `json:",omitempty"`

	// CPU features (format 2). CPUFeatures are the CPUID feature words
	// the recorded programs were shown (cpu.Features: cpuid(1).ecx/edx,
	// cpuid(7,0).ebx/ecx/edx, cpuid(0x80000001).ecx/edx); replay refuses
	// a CPU that lacks any of them. CPUIDBaseline names the baseline
	// they were limited to ('record --portable'), "" when not limited.
	CPUFeatures   []uint32 `json:",omitempty"`
	CPUIDBaseline string   `json:",omitempty"`
}

// FileDigest is the size and content hash of a captured file.
type FileDigest struct {
	Size   int64
	SHA256 string
}

func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// writeHeader writes dir/header.json atomically: temp file, fsync,
// rename, fsync of the directory.
func writeHeader(dir string, h *Header) error {
	return writeHeaderSync(dir, h, true)
}

// writeHeaderSync writes the header like writeHeader; without sync it
// neither fsyncs the file nor the directory (the rename still replaces
// the header atomically for readers and for a recorder that dies).
func writeHeaderSync(dir string, h *Header, sync bool) error {
	if err := writeHeaderTemp(dir, h, sync); err != nil {
		return err
	}
	return commitHeader(dir, sync)
}

// writeHeaderTemp writes h, with its checksum, to the temporary header
// file of dir (fsynced with sync), for commitHeader to rename.
func writeHeaderTemp(dir string, h *Header, sync bool) error {
	h.HeaderSHA256 = ""
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("trace: encode header: %w", err)
	}
	sum, err := headerSum(b)
	if err != nil {
		return fmt.Errorf("trace: encode header: %w", err)
	}
	h.HeaderSHA256 = sum
	b, err = json.MarshalIndent(h, "", "\t")
	if err != nil {
		return fmt.Errorf("trace: encode header: %w", err)
	}
	b = append(b, '\n')
	tmp := filepath.Join(dir, headerTemp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("trace: write header: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("trace: write header: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("trace: write header: %w", err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("trace: write header: %w", err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("trace: write header: %w", err)
	}
	return nil
}

// commitHeader renames the temporary header over header.json, then with
// sync fsyncs the directory.
func commitHeader(dir string, sync bool) error {
	if err := os.Rename(filepath.Join(dir, headerTemp), filepath.Join(dir, HeaderFile)); err != nil {
		return fmt.Errorf("trace: write header: %w", err)
	}
	if !sync {
		return nil
	}
	return syncDir(dir)
}

// headerHashKey is the JSON key of Header.HeaderSHA256.
const headerHashKey = "HeaderSHA256"

// canonicalHeader returns the canonical bytes of a header given as a JSON
// object: without HeaderSHA256, the keys of every object sorted, strings
// re-escaped, numbers as written, no spaces. Keys this reader does not
// know are kept, so a header written by a newer gorr checks out here too,
// and reformatting the file without changing a value is not an edit.
func canonicalHeader(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	delete(m, headerHashKey)
	return json.Marshal(m) // sorts the keys of every map
}

// headerSum is the hex SHA-256 of the canonical bytes of header b.
func headerSum(b []byte) (string, error) {
	c, err := canonicalHeader(b)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("trace: sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("trace: sync %s: %w", dir, err)
	}
	return nil
}

// readHeader reads and checks dir/header.json.
func readHeader(dir string) (Header, error) {
	var h Header
	f, err := os.Open(filepath.Join(dir, HeaderFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return h, fmt.Errorf("trace: %s: %w (no %s)", dir, ErrNotTrace, HeaderFile)
		}
		return h, fmt.Errorf("trace: %s: cannot read %s: %w", dir, HeaderFile, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHeaderBytes+1))
	if err != nil {
		return h, fmt.Errorf("trace: %s: cannot read %s: %w", dir, HeaderFile, err)
	}
	if len(b) > maxHeaderBytes {
		return h, fmt.Errorf("trace: %s: corrupt %s: larger than %d bytes", dir, HeaderFile, maxHeaderBytes)
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("trace: %s: corrupt %s: %v", dir, HeaderFile, err)
	}
	if h.Version < 1 || h.RequiredReaderVersion < 1 {
		return h, fmt.Errorf("trace: %s: %w (%s has no format version)", dir, ErrNotTrace, HeaderFile)
	}
	if h.RequiredReaderVersion > ReaderVersion {
		return h, fmt.Errorf("trace: %s: %w: the trace needs reader version %d, this gorr reads up to version %d; use a newer gorr",
			dir, ErrUnsupportedVersion, h.RequiredReaderVersion, ReaderVersion)
	}
	// Format 1 had no integrity data; from format 2 on the hash must be
	// there and match.
	if h.Version >= 2 || h.HeaderSHA256 != "" {
		sum, err := headerSum(b)
		if err != nil {
			return h, fmt.Errorf("trace: %s: corrupt %s: %v", dir, HeaderFile, err)
		}
		if h.HeaderSHA256 == "" {
			return h, &TamperError{Dir: dir, File: HeaderFile, Reason: "no integrity hash (HeaderSHA256): the header was edited"}
		}
		if sum != h.HeaderSHA256 {
			return h, &TamperError{Dir: dir, File: HeaderFile, Reason: "content does not match the recording"}
		}
	}
	return h, nil
}

// RewriteHeader replaces the header of the trace in dir with h, atomically
// and durably, with a new integrity hash. It is for tools that change a
// finished trace ('gorr pack' adds the manifest of an old trace).
func RewriteHeader(dir string, h Header) error {
	return writeHeader(dir, &h)
}
