//! An adapter's registry key, as the Net class installer leaves it: the INF's `Ndi\params`
//! defaults written as REG_SZ strings, which a test may then change, remove or mistype.
//! Value names are case-insensitive, as in the registry.

use std::collections::BTreeMap;

use dcbndk_core::keywords::{KEYWORDS, KeywordType};

/// A registry value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegValue {
    /// `REG_SZ`
    Sz(String),
    /// `REG_DWORD`
    Dword(u32),
}

/// The values under the adapter's driver key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Registry {
    values: BTreeMap<String, (String, RegValue)>,
}

impl Registry {
    /// An empty key: every keyword absent.
    #[must_use]
    pub fn empty() -> Self {
        Self::default()
    }

    /// What installing the INF leaves: every keyword with a default, as a REG_SZ decimal string,
    /// except `SimVirtualWire`: each registry made here gets a wire of its own, as if each test
    /// ran on a host of its own, so that frames of tests running in parallel never meet. A test
    /// that connects adapters puts them on one wire with [`Registry::on_wire`].
    #[must_use]
    pub fn inf_defaults() -> Self {
        let mut r = Self::empty();
        for k in KEYWORDS {
            if let (Some(d), false) = (k.default, matches!(k.kind, KeywordType::Edit { .. })) {
                r.set(k.name, RegValue::Sz(d.to_string()));
            }
        }
        r.on_wire(Self::fresh_wire());
        r
    }

    /// A wire number no other registry of this process was given by [`Registry::fresh_wire`].
    #[must_use]
    pub fn fresh_wire() -> u32 {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1000);
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// Attaches the adapter to virtual wire `wire` (`SimVirtualWire`).
    pub fn on_wire(&mut self, wire: u32) -> &mut Self {
        self.set_sz("SimVirtualWire", &wire.to_string())
    }

    /// Sets a value (replacing one of the same name in any case).
    pub fn set(&mut self, name: &str, value: RegValue) -> &mut Self {
        self.values
            .insert(name.to_ascii_uppercase(), (name.to_string(), value));
        self
    }

    /// Sets a REG_SZ value.
    pub fn set_sz(&mut self, name: &str, value: &str) -> &mut Self {
        self.set(name, RegValue::Sz(value.to_string()))
    }

    /// Removes a value.
    pub fn remove(&mut self, name: &str) -> &mut Self {
        self.values.remove(&name.to_ascii_uppercase());
        self
    }

    /// Reads a value.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&RegValue> {
        self.values.get(&name.to_ascii_uppercase()).map(|(_, v)| v)
    }

    /// Every value, by original name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &RegValue)> {
        self.values.values().map(|(n, v)| (n.as_str(), v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_case_insensitive_names() {
        let mut r = Registry::inf_defaults();
        assert_eq!(r.get("*qos"), Some(&RegValue::Sz("1".into())));
        r.set("*QoS", RegValue::Dword(0));
        assert_eq!(r.get("*QOS"), Some(&RegValue::Dword(0)));
        r.remove("*qos");
        assert_eq!(r.get("*QOS"), None);
        assert!(
            r.get("NetworkAddress").is_none(),
            "NetworkAddress has no default"
        );
    }
}
