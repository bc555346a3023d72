package charge

// SetAfterProviderCall installs a fault point that runs after each charge call
// to a provider returns and before its outcome is recorded. Set it before any
// worker starts.
func SetAfterProviderCall(f func(intentKey string)) { afterProviderCall = f }

// SetBeforeProviderCall installs a fault point that runs after an attempt is
// recorded and before the provider is called. Set it before any worker
// starts.
func SetBeforeProviderCall(f func(intentKey string)) { beforeProviderCall = f }
