// AvroHarness runs Debezium's PostgreSQL connector in the embedded engine with an Avro
// converter (DebeziumEngine.create(Avro.class): Apicurio's AvroConverter when
// converter.apicurio.registry.url is set) and writes every record's key and value bytes, as
// the converter framed them, to a file as JSON lines:
//   {"destination":"<topic>","key":"<base64>"|null,"value":"<base64>"|null}
// and, for a record with headers (the outbox EventRouter's id, ...),
// ,"headers":[{"key":"<name>","value":"<bytes as UTF-8 text>"|null},...] as a Connect worker's
// default header converter (SimpleHeaderConverter) writes them, as Harness.java does.
// The oracle of Tributary's Avro output (integration/avro). Settings as Harness.java:
// harness.max.records, harness.max.runtime.ms; every other property goes to the engine.
//
// Usage: java -cp "classes:lib/*" AvroHarness <connector.properties> <out.jsonl>

import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.Header;
import io.debezium.engine.format.Avro;
import io.debezium.engine.format.Json;

import java.io.BufferedWriter;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

public final class AvroHarness {
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: AvroHarness <connector.properties> <out.jsonl>");
            System.exit(2);
        }
        Properties props = new Properties();
        try (InputStream in = new FileInputStream(args[0])) {
            props.load(in);
        }
        long maxRecords = take(props, "harness.max.records");
        long maxRuntimeMs = take(props, "harness.max.runtime.ms");
        props.putIfAbsent("name", "avro-harness");
        props.putIfAbsent("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
        props.putIfAbsent("offset.flush.interval.ms", "0");
        props.putIfAbsent("header.converter.class", "org.apache.kafka.connect.storage.SimpleHeaderConverter");

        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(new FileOutputStream(args[1]), StandardCharsets.UTF_8));
        AtomicLong count = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Base64.Encoder b64 = Base64.getEncoder();

        // With a header format the engine converts headers too (without one it drops them).
        DebeziumEngine<ChangeEvent<byte[], byte[]>> engine = DebeziumEngine.create(Avro.class, Avro.class, Json.class)
                .using(props)
                .notifying(record -> {
                    String line = "{\"destination\":\"" + record.destination() + "\""
                            + ",\"key\":" + (record.key() == null ? "null" : "\"" + b64.encodeToString(record.key()) + "\"")
                            + ",\"value\":" + (record.value() == null ? "null" : "\"" + b64.encodeToString(record.value()) + "\"")
                            + headers(record) + "}\n";
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
            if (maxRuntimeMs > 0 && System.nanoTime() - start > maxRuntimeMs * 1_000_000L) {
                System.err.println("avro harness: ran for " + maxRuntimeMs + " ms: stopping");
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
            System.err.println("avro harness: engine failed: " + err);
            err.printStackTrace();
            System.exit(1);
        }
        System.err.println("avro harness: " + count.get() + " records written to " + args[1]);
        System.exit(0);
    }

    // headers is ,"headers":[…] for a record with headers, else "": the header format Json
    // gives each header's bytes from the header converter as UTF-8 text.
    private static String headers(ChangeEvent<byte[], byte[]> record) {
        List<Header<Object>> hs = record.headers();
        if (hs == null || hs.isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder(",\"headers\":[");
        for (int i = 0; i < hs.size(); i++) {
            Header<Object> h = hs.get(i);
            b.append(i == 0 ? "" : ",").append("{\"key\":").append(quote(h.getKey()))
                    .append(",\"value\":").append(quote(h.getValue() == null ? null : h.getValue().toString())).append('}');
        }
        return b.append(']').toString();
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

    private static long take(Properties props, String key) {
        Object v = props.remove(key);
        return v == null ? 0 : Long.parseLong(v.toString().trim());
    }
}
