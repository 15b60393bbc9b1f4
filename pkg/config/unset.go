package config

// WithUnsetEnvironment makes Load accept ${env:NAME} references to
// variables that are not set, for commands that do not use those values
// (validate, status, backfill: they connect to no database or cluster):
// each resolves to "" and unset is told the field and the problem, in the
// words Load would otherwise refuse the document with.
func WithUnsetEnvironment(unset func(field, problem string)) LoadOption {
	return func(o *loadOptions) { o.unset = unset }
}

// WithUnsetPlaceholder makes an unset variable that WithUnsetEnvironment
// accepts resolve to v instead of "": for building, without connecting,
// what run builds from the document (validate), where "" would be judged
// as the value itself (a mask's salt "" is refused) although run will have
// the variable set.
func WithUnsetPlaceholder(v string) LoadOption {
	return func(o *loadOptions) { o.placeholder = v }
}
