package patch

import (
	"encoding/binary"
	"errors"
	"reflect"
)

// The site cache's entries are lists of flat values, encoded in a compact
// binary form: decoding libc's 141 syscall-buffer sites from JSON took
// 1.1 ms at every recording (most of it encoding/json building its
// decoder for the type), against tens of microseconds for this.
//
// A flat value is an integer or a struct whose exported fields are
// integers, booleans or byte slices. The encoding: "GSC1", the number of
// elements as a uvarint, then each element's fields in order: integers
// as varints (signed) or uvarints (unsigned), booleans as one byte, byte
// slices as a uvarint length and the bytes. Entries are read only by
// the gorr build that wrote them (the cache directory names the build),
// so the layout of the types needs no description in the entry.

const flatMagic = "GSC1"

var errFlat = errors.New("site cache: not a flat value")

// encodeFlat encodes s.
func encodeFlat[T any](s []T) ([]byte, error) {
	b := append([]byte(nil), flatMagic...)
	b = binary.AppendUvarint(b, uint64(len(s)))
	v := reflect.ValueOf(s)
	for i := 0; i < v.Len(); i++ {
		var err error
		if b, err = appendFlat(b, v.Index(i)); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func appendFlat(b []byte, v reflect.Value) ([]byte, error) {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendVarint(b, v.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return binary.AppendUvarint(b, v.Uint()), nil
	case reflect.Bool:
		if v.Bool() {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			return nil, errFlat
		}
		b = binary.AppendUvarint(b, uint64(v.Len()))
		return append(b, v.Bytes()...), nil
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				return nil, errFlat
			}
			var err error
			if b, err = appendFlat(b, v.Field(i)); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	return nil, errFlat
}

// decodeFlat decodes what encodeFlat encoded; ok is false for anything
// else (a damaged or foreign entry).
func decodeFlat[T any](b []byte) (s []T, ok bool) {
	if len(b) < len(flatMagic) || string(b[:len(flatMagic)]) != flatMagic {
		return nil, false
	}
	b = b[len(flatMagic):]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) { // every element takes a byte at least
		return nil, false
	}
	b = b[k:]
	if n == 0 {
		return nil, true
	}
	s = make([]T, n)
	v := reflect.ValueOf(s)
	for i := 0; i < int(n); i++ {
		if b, ok = readFlat(b, v.Index(i)); !ok {
			return nil, false
		}
	}
	return s, len(b) == 0
}

func readFlat(b []byte, v reflect.Value) ([]byte, bool) {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, k := binary.Varint(b)
		if k <= 0 || v.OverflowInt(x) {
			return nil, false
		}
		v.SetInt(x)
		return b[k:], true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x, k := binary.Uvarint(b)
		if k <= 0 || v.OverflowUint(x) {
			return nil, false
		}
		v.SetUint(x)
		return b[k:], true
	case reflect.Bool:
		if len(b) == 0 || b[0] > 1 {
			return nil, false
		}
		v.SetBool(b[0] == 1)
		return b[1:], true
	case reflect.Slice:
		n, k := binary.Uvarint(b)
		if k <= 0 || v.Type().Elem().Kind() != reflect.Uint8 || n > uint64(len(b)-k) {
			return nil, false
		}
		if n > 0 {
			v.SetBytes(append([]byte(nil), b[k:k+int(n)]...))
		}
		return b[k+int(n):], true
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			var ok bool
			if b, ok = readFlat(b, v.Field(i)); !ok {
				return nil, false
			}
		}
		return b, true
	}
	return nil, false
}
