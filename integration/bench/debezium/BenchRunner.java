// BenchRunner runs Debezium's PostgreSQL connector in the embedded engine and publishes every
// record to Kafka with a KafkaProducer, the way Debezium Server's Kafka sink does: each batch
// the engine hands over is sent asynchronously, then the batch waits for every
// acknowledgement before it is marked processed. It is the Debezium side of `make bench`
// (integration/bench); the Go harness prepares the databases and measures.
//
// Usage: java -Xms<heap> -Xmx<heap> -cp "classes:lib/*" BenchRunner <phase.properties>...
//
// Every file but the last is a warm-up phase: its engine runs until it has published
// runner.expect.records records, or at least one and then none for runner.idle.ms (default
// 10000), or runner.max.ms passed (default 300000), and is closed. The last file is the measured phase; it runs until SIGTERM.
// Each file holds the connector settings (given to DebeziumEngine unchanged) and the producer
// settings prefixed with "producer." (given to KafkaProducer without the prefix).
// runner.offset.key and runner.offset.value (the JSON of a source partition and offset)
// are written to offset.storage.file.filename before the engine starts: the binlog position
// a MariaDB phase streams from (a PostgreSQL phase has its slot).
//
// Standard output, one line each, for the harness:
//   WARMUP_DONE <records>        after each warm-up phase
//   MEASURE_START <epoch ms>     right before the measured engine starts
// Exit status: 0 after SIGTERM, 1 when an engine or the producer failed.

import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.format.Json;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

public final class BenchRunner {
    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: BenchRunner [warmup.properties...] measure.properties");
            System.exit(2);
        }
        for (int i = 0; i < args.length - 1; i++) {
            Phase warm = new Phase(load(args[i]));
            warm.start();
            long n = warm.awaitIdle();
            warm.close();
            System.out.println("WARMUP_DONE " + n);
            System.out.flush();
        }
        Phase measure = new Phase(load(args[args.length - 1]));
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.countDown();
            measure.close();
        }));
        System.out.println("MEASURE_START " + System.currentTimeMillis());
        System.out.flush();
        measure.start();
        while (!stop.await(200, TimeUnit.MILLISECONDS)) {
            if (measure.failure.get() != null) {
                System.err.println("runner: failed: " + measure.failure.get());
                measure.failure.get().printStackTrace();
                Runtime.getRuntime().halt(1);
            }
        }
    }

    static void log(String msg) {
        System.err.println(java.time.Instant.now() + " runner: " + msg);
    }

    private static Properties load(String path) throws Exception {
        Properties p = new Properties();
        try (InputStream in = new FileInputStream(path)) {
            p.load(in);
        }
        return p;
    }

    /** Writes one offset in FileOffsetBackingStore's format: a serialized HashMap of byte[] to byte[]. */
    private static void writeOffset(String file, String key, String value) throws IOException {
        if (file == null) {
            throw new IllegalArgumentException("runner.offset.key needs offset.storage.file.filename");
        }
        HashMap<byte[], byte[]> raw = new HashMap<>();
        raw.put(key.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8));
        try (ObjectOutputStream out = new ObjectOutputStream(new FileOutputStream(file))) {
            out.writeObject(raw);
        }
    }

    /** One engine and its producer. */
    private static final class Phase {
        final Properties engineProps = new Properties();
        final Properties producerProps = new Properties();
        final long idleMs;
        final long maxMs;
        final long expect;
        final AtomicLong sent = new AtomicLong();
        final AtomicLong lastRecordNanos = new AtomicLong(System.nanoTime());
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final ExecutorService executor = Executors.newSingleThreadExecutor();
        final KafkaProducer<String, String> producer;
        final DebeziumEngine<ChangeEvent<String, String>> engine;
        private boolean closed;
        private volatile long lastLogNanos = System.nanoTime();

        Phase(Properties all) throws IOException {
            long idle = 10_000, max = 300_000, exp = 0;
            String offsetKey = null, offsetValue = null;
            for (String k : all.stringPropertyNames()) {
                String v = all.getProperty(k);
                if (k.startsWith("producer.")) {
                    producerProps.setProperty(k.substring("producer.".length()), v);
                } else if (k.equals("runner.idle.ms")) {
                    idle = Long.parseLong(v.trim());
                } else if (k.equals("runner.max.ms")) {
                    max = Long.parseLong(v.trim());
                } else if (k.equals("runner.expect.records")) {
                    exp = Long.parseLong(v.trim());
                } else if (k.equals("runner.offset.key")) {
                    offsetKey = v;
                } else if (k.equals("runner.offset.value")) {
                    offsetValue = v;
                } else {
                    engineProps.setProperty(k, v);
                }
            }
            idleMs = idle;
            maxMs = max;
            expect = exp;
            if (offsetKey != null && offsetValue != null) {
                writeOffset(engineProps.getProperty("offset.storage.file.filename"), offsetKey, offsetValue);
            }
            producerProps.putIfAbsent("client.id", "debezium-bench");
            producer = new KafkaProducer<>(producerProps, new StringSerializer(), new StringSerializer());
            engine = DebeziumEngine.create(Json.class)
                    .using(engineProps)
                    .notifying(this::handleBatch)
                    .using((success, message, error) -> {
                        if (!success) {
                            failure.compareAndSet(null, error != null ? error : new RuntimeException(message));
                        }
                    })
                    .build();
        }

        // handleBatch is Debezium Server's KafkaChangeConsumer in small: send all, wait for all.
        void handleBatch(List<ChangeEvent<String, String>> records,
                         DebeziumEngine.RecordCommitter<ChangeEvent<String, String>> committer) throws InterruptedException {
            CountDownLatch acked = new CountDownLatch(records.size());
            AtomicReference<Exception> sendError = new AtomicReference<>();
            for (ChangeEvent<String, String> r : records) {
                producer.send(new ProducerRecord<>(r.destination(), r.key(), r.value()), (md, e) -> {
                    if (e != null) {
                        sendError.compareAndSet(null, e);
                    }
                    acked.countDown();
                });
            }
            acked.await();
            if (sendError.get() != null) {
                failure.compareAndSet(null, sendError.get());
                throw new IllegalStateException("send failed", sendError.get());
            }
            for (ChangeEvent<String, String> r : records) {
                committer.markProcessed(r);
            }
            committer.markBatchFinished();
            long now = System.nanoTime();
            lastRecordNanos.set(now); // before sent moves: awaitIdle reads them in that order
            long n = sent.addAndGet(records.size());
            if (n == records.size() || now - lastLogNanos > 5_000_000_000L) {
                lastLogNanos = now;
                log("published " + n + " records");
            }
        }

        void start() {
            log("engine starting: " + engineProps.getProperty("database.dbname"));
            executor.execute(engine);
        }

        long awaitIdle() throws InterruptedException {
            long start = System.nanoTime();
            while (true) {
                Thread.sleep(100);
                long now = System.nanoTime();
                if (failure.get() != null) {
                    System.err.println("runner: warm-up failed: " + failure.get());
                    failure.get().printStackTrace();
                    System.exit(1);
                }
                if (expect > 0 && sent.get() >= expect) {
                    Thread.sleep(1000); // let the engine finish the snapshot it just emitted
                    return sent.get();
                }
                if (sent.get() > 0 && now - lastRecordNanos.get() > idleMs * 1_000_000L) {
                    log("warm-up idle after " + sent.get() + " records");
                    return sent.get();
                }
                if (now - start > maxMs * 1_000_000L) {
                    System.err.println("runner: warm-up reached runner.max.ms after " + sent.get() + " records");
                    return sent.get();
                }
            }
        }

        synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            try {
                engine.close();
                executor.shutdown();
                executor.awaitTermination(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                System.err.println("runner: closing the engine: " + e);
            }
            producer.close();
        }
    }
}
