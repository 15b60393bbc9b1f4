package main

import (
	"context"
	"fmt"

	"github.com/go-mysql-org/go-mysql/client"
)

// The MariaDB side of the backfill: the same table as PostgreSQL's (schemaSQL), every value
// the same function of the id, so both sources publish the same rows.

const (
	srcPostgres = "postgres"
	srcMariaDB  = "mariadb"
	mariaDBAddr = "127.0.0.1:3306"
)

func myURL(db string) string { return "mysql://root:root@" + mariaDBAddr + "/" + db }

// myExec runs statements on the local MariaDB, outside the binlog: the fill of a million
// rows is not a change anybody streams (the soaks and other pipelines read the same binlog),
// and a snapshot reads the table, not the log.
func myExec(db string, stmts ...string) error {
	c, err := client.Connect(mariaDBAddr, "root", "root", db)
	if err != nil {
		return fmt.Errorf("connect to MariaDB %s (is `make services-up` done?): %w", mariaDBAddr, err)
	}
	defer c.Close()
	if _, err := c.Execute("SET SESSION sql_log_bin = 0"); err != nil {
		return err
	}
	for _, s := range stmts {
		if _, err := c.Execute(s); err != nil {
			return fmt.Errorf("MariaDB: %s: %w", s, err)
		}
	}
	return nil
}

// createMyDB makes db afresh with the benchmark table holding ids 1..rows.
func createMyDB(_ context.Context, db string, rows int) error {
	q := "`" + db + "`"
	return myExec("", "DROP DATABASE IF EXISTS "+q, "CREATE DATABASE "+q, "USE "+q, `
CREATE TABLE bench (
  id          bigint PRIMARY KEY,
  customer_id int NOT NULL,
  status      varchar(16) NOT NULL,
  amount      decimal(12,2) NOT NULL,
  created_at  datetime(6) NOT NULL,
  note        text
)`, fmt.Sprintf(`INSERT INTO bench
SELECT seq, seq %% 10000, ELT(1 + seq %% 4, 'new', 'paid', 'shipped', 'delivered'),
       (seq %% 100000) / 100.0, TIMESTAMP '2024-01-01 00:00:00' + INTERVAL seq SECOND,
       REPEAT(MD5(seq), 4)
FROM seq_1_to_%d`, rows), "ANALYZE TABLE bench")
}

func dropMyDB(db string) error { return myExec("", "DROP DATABASE IF EXISTS `"+db+"`") }
