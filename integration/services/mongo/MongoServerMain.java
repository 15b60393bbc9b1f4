import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

/**
 * Starts mongo-java-server's in-memory backend on HOST:PORT with its oplog enabled, which is
 * what change streams read; without enableOplog every $changeStream cursor stays empty.
 * Runs until killed; the data lives in memory only.
 */
public final class MongoServerMain {
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: MongoServerMain HOST PORT");
            System.exit(2);
        }
        MongoServer server = new MongoServer(new MemoryBackend());
        server.enableOplog();
        server.bind(args[0], Integer.parseInt(args[1]));
        System.out.println("listening on " + server.getLocalAddress());
        Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
        Thread.currentThread().join();
    }
}
