# Sourced by every script: finds JDK 25 (JAVA_HOME if it is 25+, else /usr/lib/jvm/temurin-25*),
# exports JAVA_HOME and PATH, and quiets Maven's own JDK 25 warnings.
_orbitkv_java_ok() { [ -x "$1/bin/java" ] && "$1/bin/java" -version 2>&1 | grep -qE 'version "(2[5-9]|[3-9][0-9])'; }
if [ -n "${JAVA_HOME:-}" ] && _orbitkv_java_ok "$JAVA_HOME"; then
  :
else
  JAVA_HOME=""
  for d in /usr/lib/jvm/temurin-25*; do
    if _orbitkv_java_ok "$d"; then JAVA_HOME=$d; break; fi
  done
  if [ -z "$JAVA_HOME" ]; then
    echo "OrbitKV needs JDK 25: set JAVA_HOME to a JDK 25, or install Temurin 25 under /usr/lib/jvm/temurin-25-jdk-amd64" >&2
    exit 1
  fi
fi
export JAVA_HOME
export PATH="$JAVA_HOME/bin:$PATH"
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
