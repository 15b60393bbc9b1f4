// Harness runs one Debezium connector in Debezium's embedded engine and writes every record it
// emits, key and value as Kafka Connect's JsonConverter makes them (schemas.enable=true) and
// headers as a Connect worker's default header converter (SimpleHeaderConverter) makes them,
// to a file as JSON lines. Tributary's side-by-side tests and benchmarks compare that file with
// what Tributary publishes. It knows no connector: the connector class and all its settings
// come from a properties file. See README.md beside this file.
//
// Usage: java -cp "classes:lib/*" Harness <connector.properties> <out.jsonl>
//
// Harness settings (in the same properties file, removed before the engine sees them):
//   harness.max.records      exit after this many records (default 0: no limit)
//   harness.idle.timeout.ms  exit when no record came for this long (default 0: never)
//   harness.max.runtime.ms   exit after this long in any case (default 0: never)
// Every other property goes to DebeziumEngine unchanged. Defaults filled in when absent:
//   name=harness, offset.storage=MemoryOffsetBackingStore, offset.flush.interval.ms=0,
//   converter.schemas.enable=true,
//   header.converter.class=org.apache.kafka.connect.storage.SimpleHeaderConverter (the
//   embedded engine's own default is the JsonConverter; a Connect worker's is this one).
//
// Output: one line per record, flushed as it is written:
//   {"destination":"<topic>","key":<key JSON or null>,"value":<value JSON or null>}
// with ,"tombstone":true added when the record has no value (a Kafka tombstone); without it a
// "value":null is the converter's JSON text null. A record with headers (the outbox
// EventRouter's id, ...) also has ,"headers":[{"key":"<name>","value":"<bytes as UTF-8 text>"
// or null},...] in the record's order. Converter and transforms settings
// (converter.schemas.enable=false, transforms=unwrap with
// transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState, ...) pass through to the
// engine like any other property. The process exits 0 after a limit is reached or on SIGTERM,
// and 1 when the engine fails (the error is printed on stderr).

import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.Header;
import io.debezium.engine.format.Json;

import java.io.BufferedWriter;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

public final class Harness {
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Harness <connector.properties> <out.jsonl>");
            System.exit(2);
        }
        Properties props = new Properties();
        try (InputStream in = new FileInputStream(args[0])) {
            props.load(in);
        }
        long maxRecords = take(props, "harness.max.records");
        long idleMs = take(props, "harness.idle.timeout.ms");
        long maxRuntimeMs = take(props, "harness.max.runtime.ms");
        props.putIfAbsent("name", "harness");
        props.putIfAbsent("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
        props.putIfAbsent("offset.flush.interval.ms", "0");
        props.putIfAbsent("converter.schemas.enable", "true");
        props.putIfAbsent("header.converter.class", "org.apache.kafka.connect.storage.SimpleHeaderConverter");

        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(new FileOutputStream(args[1]), StandardCharsets.UTF_8));
        AtomicLong count = new AtomicLong();
        AtomicLong lastRecord = new AtomicLong(System.nanoTime());
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();

        // With a header format the engine converts headers too (without one it drops them).
        DebeziumEngine<ChangeEvent<String, String>> engine = DebeziumEngine.create(Json.class, Json.class, Json.class)
                .using(props)
                .notifying(record -> {
                    // A converter may write the JSON text "null" (JsonConverter with
                    // schemas.enable=false and a null value that has a schema, as
                    // ExtractNewRecordState makes for deletes): "tombstone" tells a record
                    // without a value apart from one whose value is that text.
                    String line = "{\"destination\":" + quote(record.destination())
                            + ",\"key\":" + (record.key() == null ? "null" : record.key())
                            + ",\"value\":" + (record.value() == null ? "null" : record.value())
                            + (record.value() == null ? ",\"tombstone\":true" : "") + headers(record) + "}\n";
                    synchronized (out) {
                        try {
                            out.write(line);
                            out.flush();
                        } catch (IOException e) {
                            failure.compareAndSet(null, e);
                            done.countDown();
                            return;
                        }
                    }
                    lastRecord.set(System.nanoTime());
                    if (count.incrementAndGet() >= maxRecords && maxRecords > 0) {
                        done.countDown();
                    }
                })
                .using((success, message, error) -> {
                    if (!success) {
                        failure.compareAndSet(null, error != null ? error : new RuntimeException(message));
                    }
                    done.countDown();
                })
                .build();

        ExecutorService executor = Executors.newSingleThreadExecutor();
        executor.execute(engine);
        Runtime.getRuntime().addShutdownHook(new Thread(done::countDown));

        long start = System.nanoTime();
        while (!done.await(100, TimeUnit.MILLISECONDS)) {
            long now = System.nanoTime();
            if (idleMs > 0 && now - lastRecord.get() > idleMs * 1_000_000L) {
                System.err.println("harness: idle for " + idleMs + " ms after " + count.get() + " records: stopping");
                break;
            }
            if (maxRuntimeMs > 0 && now - start > maxRuntimeMs * 1_000_000L) {
                System.err.println("harness: ran for " + maxRuntimeMs + " ms: stopping");
                break;
            }
        }
        engine.close();
        executor.shutdown();
        executor.awaitTermination(30, TimeUnit.SECONDS);
        synchronized (out) {
            out.close();
        }
        Throwable err = failure.get();
        if (err != null) {
            System.err.println("harness: engine failed: " + err);
            err.printStackTrace();
            System.exit(1);
        }
        System.err.println("harness: " + count.get() + " records written to " + args[1]);
        System.exit(0);
    }

    // headers is ,"headers":[…] for a record with headers, else "": the header format Json
    // gives each header's bytes from the header converter as UTF-8 text.
    private static String headers(ChangeEvent<String, String> record) {
        List<Header<String>> hs = record.headers();
        if (hs == null || hs.isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder(",\"headers\":[");
        for (int i = 0; i < hs.size(); i++) {
            Header<String> h = hs.get(i);
            b.append(i == 0 ? "" : ",").append("{\"key\":").append(quote(h.getKey()))
                    .append(",\"value\":").append(quote(h.getValue())).append('}');
        }
        return b.append(']').toString();
    }

    private static long take(Properties props, String key) {
        Object v = props.remove(key);
        return v == null ? 0 : Long.parseLong(v.toString().trim());
    }

    private static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
