package mysql

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/google/uuid"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// A stream reads the binlog over a replication connection of its own
// (binlogConn) rather than through go-mysql's BinlogSyncer. The syncer
// parses every event into new values in a goroutine of its own and hands
// them over on a channel: the event, its header, a table map and its
// column metadata in front of every statement, the rows event, the
// parser's map of table maps made again at each statement's end — nine
// allocations per streamed row, besides the buffer each event is read
// into. binlogConn reads each event into a block shared with the events
// after it (eventBlock), and the stream parses only what it needs
// (streamer.event): a table map whose bytes it has seen and a MariaDB
// rows event are read in place, every other event by go-mysql's parser.
// The connection is set up as the syncer sets up its own (registerSlave,
// the dump commands of binlogsyncer.go, go-mysql v1.12.0), from the same
// configuration (syncerConfig), which the binlog scan of replay.go still
// hands to a syncer.

// binlogConn is a replication connection after its dump command.
type binlogConn struct {
	c     *client.Conn
	cfg   replication.BinlogSyncerConfig
	block eventBlock
}

// dialBinlog connects as a replica and asks for the binlog after pos: by
// GTID set when gset is not nil, else by file and position.
func dialBinlog(ctx context.Context, cfg replication.BinlogSyncerConfig, flavor string, pos position, gset gomysql.GTIDSet) (*binlogConn, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	bcfg := cfg
	bcfg.Dialer = source.ReadAhead(cfg.Dialer) // the stream's reads do not wait on the server's sender
	c, err := connect(dctx, bcfg)
	if err != nil {
		return nil, err
	}
	b := &binlogConn{c: c, cfg: cfg}
	if err := b.start(cfg, flavor, pos, gset); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func connect(ctx context.Context, cfg replication.BinlogSyncerConfig) (*client.Conn, error) {
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	return client.ConnectWithDialer(ctx, "", addr, cfg.User, cfg.Password, "", cfg.Dialer, func(c *client.Conn) error {
		c.SetTLSConfig(cfg.TLSConfig)
		c.SetAttributes(map[string]string{"_client_role": "binary_log_listener"})
		c.ReadTimeout = cfg.ReadTimeout // every read of a packet, heartbeats included
		return nil
	})
}

func (b *binlogConn) start(cfg replication.BinlogSyncerConfig, flavor string, pos position, gset gomysql.GTIDSet) error {
	c := b.c
	if err := c.SetCharset(cfg.Charset); err != nil {
		return err
	}
	// Checksum-aware, and asking for none (mysqlbinlog does the same): the
	// events come without their CRC32.
	r, err := c.Execute("SHOW GLOBAL VARIABLES LIKE 'BINLOG_CHECKSUM'")
	if err != nil {
		return err
	}
	if s, _ := r.GetString(0, 1); s != "" {
		if _, err := c.Execute(`SET @master_binlog_checksum='NONE', @source_binlog_checksum='NONE'`); err != nil {
			return err
		}
	}
	if flavor == flavorMariaDB {
		// MARIA_SLAVE_CAPABILITY_GTID: GTID events, not BEGIN queries.
		if _, err := c.Execute("SET @mariadb_slave_capability=4"); err != nil {
			return fmt.Errorf("set @mariadb_slave_capability=4: %w", err)
		}
	}
	if _, err := c.Execute(fmt.Sprintf("SET @master_heartbeat_period=%d", cfg.HeartbeatPeriod.Nanoseconds())); err != nil {
		return err
	}
	id, err := uuid.NewUUID()
	if err != nil {
		return err
	}
	if _, err := c.Execute(fmt.Sprintf("SET @slave_uuid = '%s', @replica_uuid = '%s'", id, id)); err != nil {
		return err
	}
	if err := b.register(cfg); err != nil {
		return err
	}
	switch {
	case gset != nil && flavor == flavorMariaDB:
		if _, err := c.Execute(fmt.Sprintf("SET @slave_connect_state='%s'", gset.String())); err != nil {
			return err
		}
		if _, err := c.Execute("SET @slave_gtid_strict_mode=1"); err != nil {
			return err
		}
		return b.dump(cfg.ServerID, "", 0) // the file and position are ignored
	case gset != nil:
		return b.dumpGTID(cfg.ServerID, gset.Encode())
	}
	return b.dump(cfg.ServerID, pos.File, max(pos.Pos, 4))
}

// register is COM_REGISTER_SLAVE: the host it names (cfg.Localhost) is
// how SHOW SLAVE HOSTS tells this process's streams (reader.go).
func (b *binlogConn) register(cfg replication.BinlogSyncerConfig) error {
	host := cfg.Localhost
	if len(host) > 255 {
		host = host[:255]
	}
	data := make([]byte, 4, 4+1+4+1+len(host)+1+len(cfg.User)+1+2+4+4)
	data = append(data, gomysql.COM_REGISTER_SLAVE)
	data = binary.LittleEndian.AppendUint32(data, cfg.ServerID)
	data = append(append(data, byte(len(host))), host...)
	data = append(append(data, byte(len(cfg.User))), cfg.User...)
	data = append(data, 0) // no password
	data = binary.LittleEndian.AppendUint16(data, cfg.Port)
	data = binary.LittleEndian.AppendUint32(data, 0) // replication rank
	data = binary.LittleEndian.AppendUint32(data, 0) // source id
	b.c.ResetSequence()
	if err := b.c.WritePacket(data); err != nil {
		return err
	}
	_, err := b.c.ReadOKPacket()
	return err
}

// dump is COM_BINLOG_DUMP from file at pos.
func (b *binlogConn) dump(serverID uint32, file string, pos uint32) error {
	data := make([]byte, 4, 4+1+4+2+4+len(file))
	data = append(data, gomysql.COM_BINLOG_DUMP)
	data = binary.LittleEndian.AppendUint32(data, pos)
	data = binary.LittleEndian.AppendUint16(data, 0) // blocking: wait for new events at the end
	data = binary.LittleEndian.AppendUint32(data, serverID)
	data = append(data, file...)
	b.c.ResetSequence()
	return b.c.WritePacket(data)
}

// dumpGTID is MySQL's COM_BINLOG_DUMP_GTID after the encoded GTID set.
func (b *binlogConn) dumpGTID(serverID uint32, gtids []byte) error {
	data := make([]byte, 4, 4+1+2+4+4+8+4+len(gtids))
	data = append(data, gomysql.COM_BINLOG_DUMP_GTID)
	data = binary.LittleEndian.AppendUint16(data, 0)
	data = binary.LittleEndian.AppendUint32(data, serverID)
	data = binary.LittleEndian.AppendUint32(data, 0) // no file name
	data = binary.LittleEndian.AppendUint64(data, 4)
	data = binary.LittleEndian.AppendUint32(data, uint32(len(gtids)))
	data = append(data, gtids...)
	b.c.ResetSequence()
	return b.c.WritePacket(data)
}

// read returns the next binlog event, its bytes as the server sent them
// (header first). They are the caller's to keep: nothing writes them
// again.
func (b *binlogConn) read() ([]byte, error) {
	for {
		b.block.begin()
		if err := b.c.ReadPacketTo(&b.block); err != nil {
			return nil, err
		}
		data := b.block.packet()
		if len(data) == 0 {
			return nil, errors.New("empty binlog packet")
		}
		switch data[0] {
		case gomysql.OK_HEADER:
			return data[1:], nil
		case gomysql.ERR_HEADER:
			return nil, b.c.HandleErrorPacket(data)
		case gomysql.EOF_HEADER:
			// The end of the binlog of a non-blocking dump, which the
			// dump command does not ask for; the syncer reads on too.
		default:
			return nil, fmt.Errorf("binlog packet of unknown kind %#x", data[0])
		}
	}
}

// interrupt makes a read blocked in another goroutine return (a read
// timeout set for each read would not: go-mysql sets it again).
func (b *binlogConn) interrupt() {
	socket(b.c).Close()
}

// close closes the connection and ends the server's dump thread of it
// from a connection of its own (KILL), as the syncer's Close does: the
// thread notices a closed socket only when a heartbeat fails to go out,
// seconds later, and until then SHOW SLAVE HOSTS lists this stream, which
// makes the next stream's checkReader wait for it (reader.go). It waits
// for that at most killWait: a server that does not answer must not hold
// up a stop or a reconnect.
func (b *binlogConn) close() {
	id, local := b.c.GetConnectionID(), b.c.Conn.Conn.LocalAddr()
	b.c.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		killDump(b.cfg, id, local)
	}()
	select {
	case <-done:
	case <-time.After(killWait):
	}
}

// killWait bounds how long close waits for the KILL of its dump thread.
const killWait = 2 * time.Second

// killDump ends the dump thread id of the connection whose local address
// was local. The second connection may reach another server than the
// first (a failover address, a load balancer) or a proxy whose thread ids
// are its own, where id names someone else's session: the thread is
// killed only where it is a binlog dump from local's port.
func killDump(cfg replication.BinlogSyncerConfig, id uint32, local net.Addr) {
	tcp, ok := local.(*net.TCPAddr)
	if !ok {
		return
	}
	cfg.ReadTimeout = killWait
	ctx, cancel := context.WithTimeout(context.Background(), killWait)
	defer cancel()
	k, err := connect(ctx, cfg)
	if err != nil {
		return // the server or the network is gone: so is the thread, or it ends on its own
	}
	defer k.Close()
	r, err := k.Execute(fmt.Sprintf("SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = %d AND COMMAND LIKE 'Binlog Dump%%'", id))
	if err != nil || r.RowNumber() != 1 {
		return
	}
	if host, _ := r.GetString(0, 0); !strings.HasSuffix(host, ":"+strconv.Itoa(tcp.Port)) {
		return
	}
	k.Execute(fmt.Sprintf("KILL %d", id)) // Unknown thread id: it ended meanwhile
}

// eventBlockSize is the size of the blocks events are read into: a
// streamed row keeps its block in memory while anything holds its values
// (its bytes, text and binary values alias it; pkg/change/change.go), so
// a block is freed with the last of its events.
const eventBlockSize = 64 << 10

// eventBlock is the io.Writer a packet is read into: appended to the
// current block, a new one when the packet does not fit (the packet's
// bytes so far copied over). A block is never written again below the
// packet being read.
type eventBlock struct {
	buf   []byte
	start int // where the packet being read starts
}

func (b *eventBlock) begin() { b.start = len(b.buf) }

// packet returns the packet read since begin. One that did not fit in a
// block of eventBlockSize grew a block of its own up to twice its size:
// it is copied out at its size, and the next packet starts a new block,
// so a large event keeps only its own bytes in memory, and small events
// after it do not keep it.
func (b *eventBlock) packet() []byte {
	if cap(b.buf) > eventBlockSize {
		p := bytes.Clone(b.buf[b.start:])
		b.buf, b.start = nil, 0
		return p
	}
	return b.buf[b.start:len(b.buf):len(b.buf)]
}

func (b *eventBlock) Write(p []byte) (int, error) {
	if len(b.buf)+len(p) > cap(b.buf) {
		have := b.buf[b.start:]
		size := eventBlockSize
		if n := len(have) + len(p); n > eventBlockSize {
			size = 2 * n // a packet larger than a block: packet copies it out
		}
		nb := make([]byte, 0, size)
		b.buf, b.start = append(nb, have...), 0
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}
