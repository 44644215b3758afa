/// Collections of objects whose properties can be aggregated and sorted by Swift key paths:
/// `Results`, `List` and `LinkingObjects` of model objects.
public protocol ObjectCollection: RandomAccessCollection where Element: Object, Index == Int {}

extension LinkingObjects: ObjectCollection {}
extension List: ObjectCollection where Element: Object {}
