package io.walden.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Links and file names in the files of an unpacked distribution, and whether each leads to something the tree holds:
 * what an operator follows from the README, the configuration file or the unit must not lead out of the tarball.
 * Not thread-safe: one per test.
 */
final class ShippedLinks {
    /** A Markdown link or image: {@code [text](target)}. */
    private static final Pattern MARKDOWN_LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    /** A path into the distribution written from its top directory, as the configuration file's comments write them. */
    private static final Pattern TREE_PATH = Pattern.compile("(?<![\\w/.-])((?:bin|lib|conf|systemd|docs|ops)/[\\w.-]+(?:/[\\w.-]+)*)");
    /** Where the unit expects the distribution (its header: "unpacked in /opt/walden"). */
    private static final Pattern INSTALLED_PATH = Pattern.compile("(?:file://)?/opt/walden/([\\w.-]+(?:/[\\w.-]+)*)");

    private final Path home;
    private final List<String> broken = new ArrayList<>();

    ShippedLinks(Path home) {
        this.home = home;
    }

    /** Every link of a Markdown file that names no scheme, resolved from the file's directory, anchors included. */
    ShippedLinks checkMarkdown(String file) throws IOException {
        Path source = home.resolve(file);
        Matcher m = MARKDOWN_LINK.matcher(Files.readString(source));
        while (m.find()) {
            String link = m.group(1);
            if (link.matches("[a-z][a-z0-9+.-]*:.*")) {
                continue; // http(s), mailto: outside the tree by intent
            }
            int hash = link.indexOf('#');
            String path = hash < 0 ? link : link.substring(0, hash);
            Path target = path.isEmpty() ? source : source.getParent().resolve(path).normalize();
            if (!exists(file, link, target) || hash < 0) {
                continue;
            }
            if (!headingAnchors(target).contains(link.substring(hash + 1))) {
                broken.add(file + ": " + link + " (no such heading in " + home.relativize(target) + ")");
            }
        }
        return this;
    }

    /** Every path into the distribution a text file names, read from the distribution's top directory. */
    ShippedLinks checkTreePaths(String file) throws IOException {
        Matcher m = TREE_PATH.matcher(Files.readString(home.resolve(file)));
        while (m.find()) {
            exists(file, m.group(1), home.resolve(m.group(1)).normalize());
        }
        return this;
    }

    /** Every path under /opt/walden a file names (the unit's Documentation= and ExecStart=), as the unpacked tree. */
    ShippedLinks checkInstalledPaths(String file) throws IOException {
        Matcher m = INSTALLED_PATH.matcher(Files.readString(home.resolve(file)));
        while (m.find()) {
            exists(file, m.group(), home.resolve(m.group(1)).normalize());
        }
        return this;
    }

    /** What did not resolve, one line each: the file, the link, and why. */
    List<String> broken() {
        return broken;
    }

    private boolean exists(String file, String link, Path target) {
        if (!target.startsWith(home)) {
            broken.add(file + ": " + link + " (outside the distribution)");
            return false;
        }
        if (!Files.exists(target)) {
            broken.add(file + ": " + link + " (no " + home.relativize(target) + " in the distribution)");
            return false;
        }
        return true;
    }

    /** The anchors a Markdown renderer (GitHub's) gives a file's headings: lower case, punctuation dropped, spaces to '-'. */
    private static Set<String> headingAnchors(Path markdown) throws IOException {
        Set<String> anchors = new HashSet<>();
        boolean inCode = false;
        for (String line : Files.readAllLines(markdown)) {
            if (line.startsWith("```")) {
                inCode = !inCode;
            } else if (!inCode && line.matches("#{1,6} .*")) {
                String text = line.replaceFirst("#{1,6} ", "").strip().toLowerCase(Locale.ROOT);
                anchors.add(text.replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-'));
            }
        }
        return anchors;
    }
}
