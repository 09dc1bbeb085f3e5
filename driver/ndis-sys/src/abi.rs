//! The declaration macros of the FFI layer and the layout record they leave behind.
//!
//! Every struct, union and constant of `ffi` is declared through `ndis_structs!` or
//! `ndis_consts!`. Besides the Rust item, each macro records what the compiler made of it — size,
//! alignment and every field offset, or the constant's value — in a per-module [`ModuleAbi`]. The
//! ABI tests in tests/ walk [`super::MODULES`] and compare every record with the x64 table
//! (`abi/ndis-x64.tsv`) and with mingw-w64's headers, so a declaration cannot escape the
//! check: the list is produced by the same macro that produces the item.
//!
//! Field records follow the table's naming: a member whose type is defined inline in the C
//! declaration (a named nested struct or union, e.g. `NDIS_OID_REQUEST.DATA`) is marked
//! `#[abi(nested)]` and its members are checked under its name; an anonymous C member is marked
//! `#[abi(anonymous)]` and its members are checked as if they belonged to the parent, the way C
//! code names them. Other members are leaves (their type is checked where it is declared).

/// How a member's own members appear in the layout table.
#[derive(Debug, Clone, Copy)]
pub enum Nesting {
    /// A member of a separately declared type: checked by its size and offset only.
    Leaf,
    /// A named member of a type defined inside the parent (`DATA.QUERY_INFORMATION.Oid`).
    Nested(&'static StructAbi),
    /// An anonymous member: its members are named as members of the parent.
    Anonymous(&'static StructAbi),
}

/// One member of a declared struct or union, as laid out by the compiler.
#[derive(Debug, Clone, Copy)]
pub struct FieldAbi {
    /// The C member name.
    pub name: &'static str,
    /// Byte offset from the start of the containing type.
    pub offset: usize,
    /// `size_of` the member's type.
    pub size: usize,
    /// `align_of` the member's type.
    pub align: usize,
    /// Whether the member's own members are part of the parent's table rows.
    pub nesting: Nesting,
}

/// A declared struct or union, as laid out by the compiler.
#[derive(Debug, Clone, Copy)]
pub struct StructAbi {
    /// The C type name.
    pub name: &'static str,
    /// `size_of` the type.
    pub size: usize,
    /// `align_of` the type.
    pub align: usize,
    /// The members in declaration order.
    pub fields: &'static [FieldAbi],
    /// True for a type C defines inside its parent (an anonymous member's type, or a named
    /// member's inline `struct {..}`/`union {..}`): it has no row of its own; its members are
    /// checked through the parent that embeds it.
    pub inline_in_c: bool,
}

/// A declared integer constant.
#[derive(Debug, Clone, Copy)]
pub struct ConstAbi {
    /// The C name.
    pub name: &'static str,
    /// The value, sign-extended from its Rust type.
    pub value: i128,
    /// `size_of` its Rust type.
    pub size: usize,
}

/// Everything one `ffi` module declares, with the C header it mirrors.
#[derive(Debug, Clone, Copy)]
pub struct ModuleAbi {
    /// The Rust module path below `ffi`.
    pub module: &'static str,
    /// The Windows header the declarations come from (`ntddndis.h`, `ndis.h`, ...).
    pub header: &'static str,
    /// The structs and unions of the module.
    pub structs: &'static [StructAbi],
    /// The constants of the module.
    pub consts: &'static [ConstAbi],
}

/// Types whose all-zero bit pattern is a valid value: integers, raw pointers, `Option` of a
/// function pointer, arrays of these, and `ffi` structs and unions made only of these (the
/// `ndis_structs!` macro requires it of every field). It lets `zeroed()` be safe to call.
///
/// # Safety
/// Implement only for types for which `core::mem::zeroed()` is a valid value.
pub unsafe trait Zeroable {}

macro_rules! zeroable {
    ($($t:ty),* $(,)?) => {
        $(
            // SAFETY: the all-zero bit pattern is a valid value of this integer type.
            unsafe impl Zeroable for $t {}
        )*
    };
}
zeroable!(u8, u16, u32, u64, i8, i16, i32, i64, usize, isize);

// SAFETY: a null raw pointer is a valid raw pointer value.
unsafe impl<T: ?Sized> Zeroable for *mut T where *mut T: Sized {}
// SAFETY: a null raw pointer is a valid raw pointer value.
unsafe impl<T: ?Sized> Zeroable for *const T where *const T: Sized {}
// SAFETY: every element is Zeroable, so the all-zero array is valid.
unsafe impl<T: Zeroable, const N: usize> Zeroable for [T; N] {}

/// `None` of an `Option` of a function pointer is guaranteed to be the all-zero pattern (the
/// null-pointer niche), whatever the signature. Up to twelve parameters: the longest NDKPI
/// dispatch function, `NDK_FN_CONNECT` / `NDK_FN_CREATE_QP`, has twelve.
macro_rules! zeroable_fn_pointers {
    ($(($($arg:ident),*)),* $(,)?) => {
        $(
            // SAFETY: see above: `None` is all zeros.
            unsafe impl<R, $($arg),*> Zeroable for Option<unsafe extern "system" fn($($arg),*) -> R> {}
        )*
    };
}
zeroable_fn_pointers!(
    (),
    (A),
    (A, B),
    (A, B, C),
    (A, B, C, D),
    (A, B, C, D, E),
    (A, B, C, D, E, F),
    (A, B, C, D, E, F, G),
    (A, B, C, D, E, F, G, H),
    (A, B, C, D, E, F, G, H, I),
    (A, B, C, D, E, F, G, H, I, J),
    (A, B, C, D, E, F, G, H, I, J, K),
    (A, B, C, D, E, F, G, H, I, J, K, L)
);

/// Picks the [`Nesting`] of a member from its optional `#[abi(..)]` marker.
macro_rules! nesting {
    (; $t:ty) => {
        $crate::abi::Nesting::Leaf
    };
    (nested; $t:ty) => {
        $crate::abi::Nesting::Nested(&<$t>::ABI)
    };
    (anonymous; $t:ty) => {
        $crate::abi::Nesting::Anonymous(&<$t>::ABI)
    };
}
pub(crate) use nesting;

/// Says whether an item stands for a type C defines inside its parent (`#[abi(inline)]`).
macro_rules! item_is_inline {
    () => {
        false
    };
    (inline) => {
        true
    };
}
pub(crate) use item_is_inline;

/// Declares `#[repr(C)]` structs and unions with C names and records their layout in a
/// `pub const STRUCTS: &[StructAbi]` of the calling module.
///
/// Each item may carry `#[align(N)]` for a `DECLSPEC_ALIGN(N)` type and `#[abi(inline)]` when it
/// stands for a struct or union C defines inside its parent; each field may carry `#[abi(nested)]` or
/// `#[abi(anonymous)]` (see the module documentation). Every field type must be [`Zeroable`],
/// which makes the generated `zeroed()` constructor safe.
macro_rules! ndis_structs {
    ($(
        $(#[doc = $doc:literal])*
        $(#[abi($item_kind:ident)])?
        $(#[align($align:literal)])?
        pub $kind:tt $name:ident {
            $(
                $(#[doc = $fdoc:literal])*
                $(#[abi($nest:ident)])?
                pub $field:ident : $fty:ty
            ),* $(,)?
        }
    )*) => {
        $(
            $(#[doc = $doc])*
            #[repr(C)]
            $(#[repr(align($align))])?
            #[derive(Clone, Copy)]
            #[allow(non_snake_case, reason = "C member names, as in the DDI reference")]
            pub $kind $name {
                $(
                    $(#[doc = $fdoc])*
                    pub $field: $fty,
                )*
            }

            impl $name {
                /// The layout the compiler gave this type, for the ABI tests.
                pub const ABI: $crate::abi::StructAbi = $crate::abi::StructAbi {
                    name: stringify!($name),
                    size: ::core::mem::size_of::<$name>(),
                    align: ::core::mem::align_of::<$name>(),
                    inline_in_c: $crate::abi::item_is_inline!($($item_kind)?),
                    fields: &[$(
                        $crate::abi::FieldAbi {
                            name: stringify!($field),
                            offset: ::core::mem::offset_of!($name, $field),
                            size: ::core::mem::size_of::<$fty>(),
                            align: ::core::mem::align_of::<$fty>(),
                            nesting: $crate::abi::nesting!($($nest)?; $fty),
                        }
                    ),*],
                };

                /// The all-zero value, the way C code starts with `NdisZeroMemory`.
                #[must_use]
                pub const fn zeroed() -> Self {
                    // SAFETY: every field type is Zeroable (checked by the impl below), so the
                    // all-zero bit pattern is a valid value of this struct or union.
                    unsafe { ::core::mem::zeroed() }
                }
            }

            // SAFETY: each field type is required to be Zeroable by the bound check below.
            unsafe impl $crate::abi::Zeroable for $name {}

            const _: () = {
                const fn all_fields_zeroable<T: $crate::abi::Zeroable>() {}
                $( all_fields_zeroable::<$fty>(); )*
            };
        )*

        /// The layouts of the structs and unions declared in this module.
        pub const STRUCTS: &[$crate::abi::StructAbi] = &[$($name::ABI),*];
    };
}
pub(crate) use ndis_structs;

/// Declares constants with C names and records their values in a `pub const CONSTS: &[ConstAbi]`
/// of the calling module.
macro_rules! ndis_consts {
    ($(
        $(#[doc = $doc:literal])*
        pub const $name:ident : $ty:ty = $value:expr;
    )*) => {
        $(
            $(#[doc = $doc])*
            #[allow(non_upper_case_globals, reason = "C enumerator names, as in the headers")]
            pub const $name: $ty = $value;
        )*

        /// The constants declared in this module, with their values.
        #[allow(clippy::cast_lossless, reason = "recording every integer width as i128")]
        pub const CONSTS: &[$crate::abi::ConstAbi] = &[$(
            $crate::abi::ConstAbi {
                name: stringify!($name),
                value: $name as i128,
                size: ::core::mem::size_of::<$ty>(),
            }
        ),*];
    };
}
pub(crate) use ndis_consts;

/// A `DECLSPEC_ALIGN(16)` member: the value, placed at a 16-byte boundary. Every use wraps an
/// array whose size is a multiple of 16, so the wrapper adds no bytes.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Align16<T>(pub T);

// SAFETY: the wrapper adds only alignment; its one field is Zeroable.
unsafe impl<T: Zeroable> Zeroable for Align16<T> {}
