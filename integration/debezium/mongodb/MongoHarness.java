package io.debezium.connector.mongodb;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;
import org.bson.BsonDocument;
import org.bson.BsonDocumentReader;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.configuration.CodecRegistries;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.changestream.ChangeStreamDocument;

import io.debezium.config.Configuration;
import io.debezium.connector.mongodb.transforms.ExtractNewDocumentState;
import io.debezium.data.Envelope;
import io.debezium.schema.DefaultTopicNamingStrategy;
import io.debezium.schema.SchemaNameAdjuster;
import io.debezium.spi.topic.TopicNamingStrategy;

/**
 * Debezium's MongoDB conversion as an oracle, without a server: each stdin line is
 * {"event": <change-stream event>} or {"read": {"ns": "db.coll", "doc": <document>}} in
 * canonical extended JSON; for each the harness prints two lines, the key and the value as
 * Kafka Connect's JsonConverter (schemas on) writes them. It drives the connector's own
 * classes (MongoDbSchema, MongoDbCollectionSchema, SourceInfo, the source struct maker); the
 * envelope's ts_ms (the connector's clock) is fixed at 0 so runs compare byte for byte.
 *
 * Options after the prefix: schemas.enable=false (the converter's), and unwrap=true to run
 * each record through ExtractNewDocumentState, with unwrap.<option>=<value> for its options
 * (delete.tombstone.handling.mode, add.fields, …). With the transform a record it drops is
 * printed as two lines "<dropped>", a null value as "<tombstone>", and a record it fails on as
 * two lines "<error> <message>". connector.<option>=<value> sets a connector option (e.g.
 * field.exclude.list, field.renames).
 *
 * Usage: MongoHarness TOPIC_PREFIX [OPTION=VALUE…]
 */
public final class MongoHarness {
    public static void main(String[] args) throws Exception {
        String prefix = args[0];
        Configuration.Builder b = Configuration.create()
                .with("topic.prefix", prefix)
                .with("mongodb.connection.string", "mongodb://localhost:27017/?replicaSet=rs0");
        String schemasEnable = "true";
        ExtractNewDocumentState<SourceRecord> unwrap = null;
        Map<String, Object> unwrapConf = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            if (kv[0].equals("schemas.enable")) {
                schemasEnable = kv[1];
            } else if (kv[0].equals("unwrap")) {
                unwrap = new ExtractNewDocumentState<>();
            } else if (kv[0].startsWith("unwrap.")) {
                unwrapConf.put(kv[0].substring("unwrap.".length()), kv[1]);
            } else if (kv[0].startsWith("connector.")) {
                b.with(kv[0].substring("connector.".length()), kv[1]);
            } else {
                throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (unwrap != null) {
            unwrap.configure(unwrapConf);
        }
        Configuration config = b.build();
        MongoDbConnectorConfig cfg = new MongoDbConnectorConfig(config);
        MongoDbSourceInfoStructMaker maker = new MongoDbSourceInfoStructMaker();
        maker.init("mongodb", "3.6.1.Final", cfg);
        MongoDbTaskContext ctx = new MongoDbTaskContext(config);
        @SuppressWarnings("unchecked")
        TopicNamingStrategy<CollectionId> topics = (TopicNamingStrategy<CollectionId>) (TopicNamingStrategy<?>) DefaultTopicNamingStrategy.create(cfg);
        MongoDbSchema schema = new MongoDbSchema(cfg, ctx, topics, maker.schema(), SchemaNameAdjuster.NO_OP);

        JsonConverter keys = new JsonConverter();
        JsonConverter values = new JsonConverter();
        Map<String, Object> conv = new HashMap<>();
        conv.put("schemas.enable", schemasEnable);
        conv.put("converter.type", "key");
        keys.configure(conv, true);
        conv.put("converter.type", "value");
        values.configure(conv, false);

        var codec = ChangeStreamDocument.createCodec(BsonDocument.class,
                CodecRegistries.fromRegistries(MongoClientSettings.getDefaultCodecRegistry()));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            BsonDocument input = BsonDocument.parse(line);
            try {
                SourceInfo source = new SourceInfo(cfg);
                Struct key;
                Struct value;
                MongoDbCollectionSchema cs;
                String topic;
                if (input.containsKey("event")) {
                    ChangeStreamDocument<BsonDocument> ev = codec.decode(
                            new BsonDocumentReader(input.getDocument("event")), DecoderContext.builder().build());
                    CollectionId id = CollectionId.parse(ev.getNamespace().getFullName());
                    cs = (MongoDbCollectionSchema) schema.schemaFor(id);
                    topic = topics.dataChangeTopic(id);
                    source.changeStreamEvent(ev);
                    Envelope.Operation op = switch (ev.getOperationType()) {
                        case INSERT -> Envelope.Operation.CREATE;
                        case UPDATE, REPLACE -> Envelope.Operation.UPDATE;
                        case DELETE -> Envelope.Operation.DELETE;
                        default -> throw new IllegalArgumentException("not a data event: " + ev.getOperationType());
                    };
                    key = cs.keyFromDocument(ev.getDocumentKey());
                    value = cs.valueFromDocumentChangeStream(ev, op);
                    value.put("op", op.code());
                } else {
                    BsonDocument read = input.getDocument("read");
                    CollectionId id = CollectionId.parse(read.getString("ns").getValue());
                    cs = (MongoDbCollectionSchema) schema.schemaFor(id);
                    topic = topics.dataChangeTopic(id);
                    source.startInitialSnapshot();
                    source.readEvent(id, 0L);
                    BsonDocument doc = read.getDocument("doc");
                    key = cs.keyFromDocument(doc);
                    value = cs.valueFromDocumentSnapshot(doc, Envelope.Operation.READ);
                    value.put("op", Envelope.Operation.READ.code());
                }
                value.put("source", maker.struct(source));
                value.put("ts_ms", 0L);
                if (unwrap == null) {
                    System.out.println(new String(keys.fromConnectData(topic, cs.keySchema(), key), StandardCharsets.UTF_8));
                    System.out.println(new String(values.fromConnectData(topic, cs.valueSchema(), value), StandardCharsets.UTF_8));
                    continue;
                }
                String k;
                String v;
                try {
                    SourceRecord r = unwrap.apply(new SourceRecord(null, null, topic, 0, cs.keySchema(), key, cs.valueSchema(), value));
                    if (r == null) {
                        k = "<dropped>";
                        v = k;
                    } else {
                        k = new String(keys.fromConnectData(topic, r.keySchema(), r.key()), StandardCharsets.UTF_8);
                        byte[] vb = values.fromConnectData(topic, r.valueSchema(), r.value());
                        v = vb == null ? "<tombstone>" : new String(vb, StandardCharsets.UTF_8);
                    }
                } catch (RuntimeException e) {
                    k = "<error> " + String.valueOf(e.getMessage()).replace('\n', ' ');
                    v = k;
                }
                System.out.println(k);
                System.out.println(v);
            } catch (RuntimeException e) {
                // The connector failed on the record (e.g. a rename onto an existing field).
                String err = "<error> " + String.valueOf(e.getMessage()).replace('\n', ' ');
                System.out.println(err);
                System.out.println(err);
            }
        }
    }
}
