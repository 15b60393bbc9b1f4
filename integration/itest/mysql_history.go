package itest

func (e *MyEnv) MinimalConfig() string {
	return e.WriteConfig("")
}
