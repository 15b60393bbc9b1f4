package tributary.apicurio;

import io.apicurio.common.apps.config.DynamicConfigPropertyList;
import java.util.ArrayList;
import javax.enterprise.context.ApplicationScoped;
import javax.enterprise.inject.Produces;

// Stands in for apicurio-common-app-components-config-index, which is not on Maven Central:
// the test registry changes no configuration at run time, so its list is empty.
@ApplicationScoped
public class EmptyDynamicConfig {
    @Produces
    @ApplicationScoped
    public DynamicConfigPropertyList dynamicConfigPropertyList() {
        return new DynamicConfigPropertyList(new ArrayList<>());
    }
}
