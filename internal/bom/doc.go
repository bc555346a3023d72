// Package bom reads the byte-order mark a text file may start with. Every
// reader of files from outside (statements, intents CSV, callbacks files)
// goes through it: a UTF-8 mark is dropped, and a file in UTF-16 or UTF-32
// (with a mark, or UTF-16 text recognisable without one) is refused with an
// error that says what to do, instead of being read as garbled text that
// fails later for a reason that names no encoding.
//
// It converts nothing: reconcile reads UTF-8 only.
package bom
