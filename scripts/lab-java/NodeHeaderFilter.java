/*
 * Part of ingestbench's Java lab (scripts/lab-java.sh): every response of a Tomcat node names
 * the node in X-Ingestbench-Node, the header the lab's access methods read for the node split,
 * whatever is in front (mod_jk over AJP, mod_proxy, HAProxy, or nothing). The name is the
 * node's jvmRoute (-DjvmRoute=node1 on its command line, which Tomcat's Engine also takes), so
 * the header and the AJP route can never disagree. Set before the chain runs: the repository
 * may commit the response at any time.
 */
package ingestbench.lab;

import java.io.IOException;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.FilterConfig;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletResponse;

public final class NodeHeaderFilter implements Filter {
    private String node;

    @Override
    public void init(FilterConfig config) throws ServletException {
        node = System.getProperty("jvmRoute");
        if (node == null || node.isEmpty()) {
            throw new ServletException("NodeHeaderFilter: start the JVM with -DjvmRoute=<node name>");
        }
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse resp, FilterChain chain)
            throws IOException, ServletException {
        ((HttpServletResponse) resp).setHeader("X-Ingestbench-Node", node);
        chain.doFilter(req, resp);
    }

    @Override
    public void destroy() {
    }
}
