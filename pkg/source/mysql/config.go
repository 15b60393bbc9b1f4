package mysql

import (
	"errors"
	"hash/fnv"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Conn is a MySQL / MariaDB source.url, parsed. Password is a secret.
type Conn struct {
	User     string
	Password string
	Host     string
	Port     uint16 // default 3306
	Database string // may be empty: every database
	// Params are the query parameters (e.g. tls=skip-verify is refused,
	// tls=true / tls=preferred are honoured by the source).
	Params map[string]string
}

// Addr returns host:port.
func (c Conn) Addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))) }

// ParseURL reads source.url for a mysql source in either form:
//
//	mysql://user:password@host:3306/database?param=value   (mariadb:// too)
//	user:password@tcp(host:3306)/database?param=value      (go-sql-driver DSN)
//
// User name and password in the URL form are percent-decoded; in the DSN form
// the password runs to the last '@', as go-sql-driver reads it. Errors
// describe the problem without quoting the value, which may hold a password.
func ParseURL(s string) (Conn, error) {
	c := Conn{Port: 3306, Params: map[string]string{}}
	if strings.HasPrefix(s, "mysql://") || strings.HasPrefix(s, "mariadb://") {
		u, err := url.Parse(s)
		if err != nil {
			return c, errors.New("is not a valid URL (value not shown: it may hold a password); percent-encode special characters in the user name and password")
		}
		if u.User != nil {
			c.User = u.User.Username()
			c.Password, _ = u.User.Password()
		}
		c.Host = u.Hostname()
		if p := u.Port(); p != "" {
			n, err := strconv.ParseUint(p, 10, 16)
			if err != nil || n == 0 {
				return c, errors.New("has a port that is not a number from 1 to 65535")
			}
			c.Port = uint16(n)
		}
		c.Database = strings.TrimPrefix(u.Path, "/")
		for k, v := range u.Query() {
			c.Params[k] = v[len(v)-1]
		}
		return c, c.check()
	}
	if strings.Contains(s, "://") {
		return c, errors.New("must start with mysql:// (or be a DSN such as user:password@tcp(host:3306)/database) for a mysql source")
	}
	// DSN: [user[:password]@][protocol[(address)]]/dbname[?params]
	slash := strings.LastIndex(s, "/")
	if slash < 0 {
		return c, errors.New("must be mysql://user:password@host:3306/database or user:password@tcp(host:3306)/database")
	}
	dsn, rest := s[:slash], s[slash+1:]
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		q, err := url.ParseQuery(rest[i+1:])
		if err != nil {
			return c, errors.New("has query parameters that are not name=value pairs joined by '&'")
		}
		for k, v := range q {
			c.Params[k] = v[len(v)-1]
		}
		rest = rest[:i]
	}
	db, err := url.PathUnescape(rest)
	if err != nil {
		return c, errors.New("has a database name with a bad %-escape")
	}
	c.Database = db
	if at := strings.LastIndex(dsn, "@"); at >= 0 {
		cred := dsn[:at]
		dsn = dsn[at+1:]
		if i := strings.IndexByte(cred, ':'); i >= 0 {
			c.User, c.Password = cred[:i], cred[i+1:]
		} else {
			c.User = cred
		}
	}
	switch {
	case dsn == "":
		c.Host = "127.0.0.1"
	case strings.HasPrefix(dsn, "tcp(") && strings.HasSuffix(dsn, ")"):
		addr := dsn[len("tcp(") : len(dsn)-1]
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			host, port = addr, ""
		}
		c.Host = host
		if port != "" {
			n, err := strconv.ParseUint(port, 10, 16)
			if err != nil || n == 0 {
				return c, errors.New("has a port that is not a number from 1 to 65535")
			}
			c.Port = uint16(n)
		}
	case dsn == "tcp":
		c.Host = "127.0.0.1"
	default:
		return c, errors.New("must use the tcp(host:port) protocol in the DSN form (unix sockets are not supported)")
	}
	return c, c.check()
}

func (c Conn) check() error {
	switch {
	case c.Host == "":
		return errors.New("has no host")
	case strings.ContainsAny(c.Database, "/`"):
		return errors.New("has a database name with '/' or '`'")
	}
	if v, ok := c.Params["tls"]; ok {
		switch v {
		case "true", "false", "preferred":
		case "skip-verify":
			return errors.New("asks for tls=skip-verify: certificate verification is never switched off")
		default:
			return errors.New("has tls= other than true, false or preferred")
		}
	}
	return nil
}

// DefaultServerID is source.server_id when the document leaves it out: a
// hash of the pipeline name in [1 << 30, 1 << 31), far from the small ids
// people give their servers, and stable across restarts, so the server
// sees the same replica come back.
func DefaultServerID(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return 1<<30 | h.Sum32()&(1<<30-1)
}
