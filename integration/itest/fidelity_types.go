package itest

// WriteSourceConfig is writeConfig with lines added to the source section
// too.
func (e *Env) WriteSourceConfig(source, destination string) string {
	return e.WritePipeline(PipelineConfig{Source: source, Destination: destination})
}
