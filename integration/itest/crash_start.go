package itest

func KeyOf(m Message) int64 {
	k, _ := m.Key["payload"].(map[string]any)["k"].(float64)
	return int64(k)
}
