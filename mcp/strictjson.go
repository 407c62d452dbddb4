package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// The strict reading of a REST body. encoding/json matches a member to a
// struct field case-insensitively and lets a repeated member overwrite the
// first, so {"Name":"A"} and {"name":"B","name":"A"} both call A: a proxy or
// a policy in front of the server that reads the body by the letter (or
// keeps the first of two members, as many parsers do) sees another call
// than the one that runs. Before a body is decoded, every object in it is
// walked: a member named twice is refused at any depth (arguments included,
// which the tool decodes in turn), and in an object that is decoded into a
// struct only the struct's own member names, spelt exactly, are accepted.

// MaxBodyDepth bounds how deeply a REST body may nest objects and arrays;
// the walk keeps a depth counter, as encoding/json does. Tool arguments
// nest a few levels; this is far above any real call.
const MaxBodyDepth = 128

// bodyError is a REST body refused before any tool runs: what is wrong
// and, when one member is to blame, its path from the top ("arguments.x").
type bodyError struct {
	msg    string
	member string
}

// checkMembers walks the JSON value in body (already read, so bounded by the
// body limit) against the type it will be decoded into, t: an object that
// meets a struct type may hold only that struct's members, spelt as its
// json tags spell them; no object may name a member twice. Types the walk
// does not know (json.RawMessage, interfaces, maps) accept any names.
// Syntax errors are left to the decoding that follows.
func checkMembers(body []byte, t reflect.Type) *bodyError {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	err := walkValue(dec, t, "", 0)
	var be *bodyError
	if errors.As(err, &be) {
		return be
	}
	return nil
}

// Error lets the walk return a *bodyError among the decoder's errors.
func (e *bodyError) Error() string { return e.msg }

// walkValue reads one value from dec. Its errors are *bodyError, or the
// decoder's for a malformed body.
func walkValue(dec *json.Decoder, t reflect.Type, path string, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil // a scalar
	}
	if depth >= MaxBodyDepth {
		return &bodyError{msg: "body nests deeper than " + strconv.Itoa(MaxBodyDepth) + " levels", member: path}
	}
	t = unpointer(t)
	switch d {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t != rawMessageType {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkValue(dec, elem, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return err
			}
		}
	case '{':
		fields := structMembers(t)
		var mapElem reflect.Type
		if t != nil && t.Kind() == reflect.Map {
			mapElem = t.Elem()
		}
		seen := make(map[string]bool)
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			name, _ := tok.(string)
			member := name
			if path != "" {
				member = path + "." + name
			}
			if seen[name] {
				return &bodyError{msg: "member " + strconv.Quote(member) + " appears more than once", member: member}
			}
			seen[name] = true
			next := mapElem
			if fields != nil {
				ft, ok := fields[name]
				if !ok {
					return &bodyError{msg: "unknown member " + strconv.Quote(member) + " (member names are matched exactly: " +
						strings.Join(slices.Sorted(maps.Keys(fields)), ", ") + ")", member: member}
				}
				next = ft
			}
			if err := walkValue(dec, next, member, depth+1); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

func unpointer(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// structMembers is the member names encoding/json decodes into the struct
// type t, with each one's type; nil when t is not a struct. A field's name
// is its json tag's, else the field's own; "-" is no member; the fields of
// an untagged embedded struct are its own.
func structMembers(t reflect.Type) map[string]reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	out := make(map[string]reflect.Type)
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			if ft := unpointer(f.Type); ft.Kind() == reflect.Struct {
				for n, nt := range structMembers(ft) {
					if _, ok := out[n]; !ok {
						out[n] = nt
					}
				}
				continue
			}
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
