package config

import "reflect"

// setting is the value of the source setting key (source.slot) in a
// Config's Settings, read by its yaml name: this package's tests cannot
// import the drivers that declare the types.
func setting(c *Config, key string) any {
	v := reflect.ValueOf(c.Source.Settings)
	if !v.IsValid() {
		return nil
	}
	for i := 0; i < v.NumField(); i++ {
		if yamlName(v.Type().Field(i)) == key {
			return v.Field(i).Interface()
		}
	}
	return nil
}

// setSetting sets the source setting key in a Config's Settings.
func setSetting(c *Config, key string, value any) {
	v := reflect.New(reflect.TypeOf(c.Source.Settings)).Elem()
	v.Set(reflect.ValueOf(c.Source.Settings))
	for i := 0; i < v.NumField(); i++ {
		if yamlName(v.Type().Field(i)) == key {
			v.Field(i).Set(reflect.ValueOf(value))
		}
	}
	c.Source.Settings = v.Interface()
}
