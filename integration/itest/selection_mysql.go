package itest

// OtherDB creates a second database beside e's, dropped with the test.
func (e *MyEnv) OtherDB() string {
	e.T.Helper()
	other := e.DB + "_x"
	e.Exec("CREATE DATABASE " + other)
	e.T.Cleanup(func() { e.My.Execute("DROP DATABASE IF EXISTS " + other) })
	return other
}
