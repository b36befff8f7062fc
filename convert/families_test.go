package convert

// Convert reads the architectures from the registry, which the model
// packages fill.
import _ "inferno/model"
