import torch

print(torch._C._meta_in_tls_dispatch_include())
with torch._C._IncludeDispatchKeyGuard(torch.DispatchKey.Meta):
    print(torch._C._meta_in_tls_dispatch_include())
print(torch._C._meta_in_tls_dispatch_include())
