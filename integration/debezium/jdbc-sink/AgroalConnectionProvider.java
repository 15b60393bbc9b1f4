package org.hibernate.agroal.internal;

/**
 * A name holder, not a connection pool. Debezium's JDBC sink (3.6) names this class as the
 * default of its connection.provider setting, so its configuration class needs it loadable;
 * hibernate-agroal is not served by Maven Central here (jdbc-sink/pom.xml excludes it), and
 * integration/scenario/jdbc_sink_test.go sets connection.provider to Hibernate's built-in
 * DriverManagerConnectionProvider, so this class is never instantiated.
 */
public final class AgroalConnectionProvider {
    private AgroalConnectionProvider() {
    }
}
