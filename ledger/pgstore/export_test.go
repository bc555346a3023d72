package pgstore

// Translate exposes translate to the external tests.
var Translate = translate
