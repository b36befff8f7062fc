package quantize

// The rules read the architectures' families from the registry, which the
// model packages fill.
import _ "inferno/model"
