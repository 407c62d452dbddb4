package session

// MaxProjectNameLen lets the external tests name the bound.
const MaxProjectNameLen = maxProjectNameLen
